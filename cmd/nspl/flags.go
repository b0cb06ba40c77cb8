package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// outputFormat is how result sets and messages are written.
type outputFormat string

const (
	formatTable outputFormat = "table"
	formatJSON  outputFormat = "json"
	formatPlain outputFormat = "plain"
	formatCSV   outputFormat = "csv"
)

// Set implements flag.Value.
func (f *outputFormat) Set(s string) error {
	switch v := outputFormat(strings.ToLower(s)); v {
	case formatTable, formatJSON, formatPlain, formatCSV:
		*f = v
		return nil
	}
	return fmt.Errorf("unknown format %q; use table, json, plain or csv", s)
}

// String implements flag.Value.
func (f *outputFormat) String() string { return string(*f) }

// sourceKind says where a script comes from.
type sourceKind uint8

const (
	sourceFile    sourceKind = iota // -f FILE
	sourceStdin                     // -f - or piped stdin
	sourceCommand                   // -c TEXT
)

// scriptSource is one -f or -c argument, kept in command-line order.
type scriptSource struct {
	kind sourceKind
	arg  string // the file name or the statement text
}

// name is what diagnostics print before LINE:COL.
func (s scriptSource) name() string {
	switch s.kind {
	case sourceStdin:
		return "<stdin>"
	case sourceCommand:
		return "-c"
	default:
		return s.arg
	}
}

// sourceList is the flag.Value behind -f and -c: both append to one list so
// the scripts run in the order they were given.
type sourceList struct {
	list *[]scriptSource
	kind sourceKind
}

func (l sourceList) Set(s string) error {
	kind := l.kind
	if kind == sourceFile && s == "-" {
		kind = sourceStdin
	}
	if kind == sourceFile && s == "" {
		return errors.New("empty file name; give a path or - for stdin")
	}
	*l.list = append(*l.list, scriptSource{kind: kind, arg: s})
	return nil
}

func (l sourceList) String() string { return "" }

// options are the parsed command line.
type options struct {
	sources         []scriptSource
	continueOnError bool
	echo            bool
	quiet           bool
	format          outputFormat
	dataDir         string
	verbose         bool
	console         string // --console: serve the web console on this loopback address

	virtualTime  bool   // --virtual-time: the embedded node runs on virtual time
	virtualStart string // --virtual-start: the instant it starts at ("" for the default)
	virtualAt    int64  // the start instant, once checkVirtualTime has parsed it

	vars              map[string]string // -v NAME=VALUE
	output            string            // -o FILE: replies go to FILE
	singleTransaction bool              // -1: the scripts run in one transaction

	archive *archiveCommand // the backup or restore subcommand, when given

	remote remoteOptions // --connect and its credentials
	serve  *serveOptions // the serve subcommand, when given
	admin  *adminCommand // the leave or remove subcommand, when given
	tool   toolOptions   // --version, --suggest, help, completion

	lsp bool // the lsp subcommand was given

	clock        bool // the clock subcommand was given
	clockDomain  string
	untilTick    uint64
	clockTimeout time.Duration
	waitStart    bool
}

// addCommonFlags registers the flags the shell, the script runner and the
// clock subcommand share.
func addCommonFlags(fs *flag.FlagSet, o *options) {
	fs.Var(sourceList{list: &o.sources, kind: sourceFile}, "f", "run the statements in `FILE` (repeatable; - reads stdin)")
	fs.Var(sourceList{list: &o.sources, kind: sourceCommand}, "c", "run the statements in `TEXT` (repeatable)")
	fs.BoolVar(&o.continueOnError, "continue-on-error", false, "keep running after a failed statement (the exit code is still 1)")
	fs.BoolVar(&o.echo, "echo", false, "print each statement before its result")
	fs.Var(&o.format, "format", "result format: table, json, plain or csv")
	fs.BoolVar(&o.quiet, "quiet", o.quiet, "print result sets only, no messages")
	fs.BoolVar(&o.quiet, "q", o.quiet, "short for --quiet")
	fs.Var(variableList{vars: &o.vars}, "v", "set the variable `NAME=VALUE` that :NAME and :'NAME' stand for (repeatable)")
	fs.StringVar(&o.output, "o", "", "write replies to `FILE` instead of stdout (created 0600; errors still go to stderr)")
	fs.BoolVar(&o.singleTransaction, "single-transaction", false, "run the -c/-f input in one transaction: BEGIN after its leading USE, COMMIT at the end, REVERT on the first failure")
	fs.BoolVar(&o.singleTransaction, "1", false, "short for --single-transaction")
	fs.StringVar(&o.dataDir, "data-dir", "", "keep the node's catalog in `DIR` (default: in memory)")
	fs.BoolVar(&o.verbose, "verbose", false, "log the node's internals to stderr")
	fs.BoolVar(&o.virtualTime, "virtual-time", false, "run the embedded node on virtual time, which jumps to the next timer whenever the script waits")
	fs.StringVar(&o.virtualStart, "virtual-start", "", "with --virtual-time, start virtual UTC at `TIMESTAMP` (default 2030-01-01T00:00:00Z)")
	addRemoteFlags(fs, &o.remote)
}

// parseArgs parses args (without the program name). It returns flag.ErrHelp
// when help was asked for, and a usage error (ErrUsage) for anything wrong.
func parseArgs(args []string) (options, error) {
	o := options{format: formatTable}
	fs := flag.NewFlagSet("nspl", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addCommonFlags(fs, &o)
	addToolFlags(fs, &o.tool)
	fs.StringVar(&o.console, "console", "", "serve the web console of the embedded node on loopback `HOST:PORT` while the shell runs")
	if err := fs.Parse(args); err != nil {
		return o, flagParseError(fs, "", err)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return o, nil
	}
	switch rest[0] {
	case "backup":
		return parseBackupArgs(o, rest[1:])
	case "restore":
		return parseRestoreArgs(o, rest[1:])
	case "serve":
		return parseServeArgs(o, rest[1:])
	case "leave", "remove":
		return parseAdminArgs(o, rest[0], rest[1:])
	case "node":
		return parseNodeArgs(o, rest[1:])
	case "lsp":
		return parseLSPArgs(o, rest[1:])
	case "help", "version", "completion":
		return parseToolArgs(o, rest[0], rest[1:])
	}
	if rest[0] != "clock" {
		return o, unexpectedArgument(rest[0])
	}
	o.clock = true
	cs := flag.NewFlagSet("nspl clock", flag.ContinueOnError)
	cs.SetOutput(io.Discard)
	addSubcommandFlags(cs, &o)
	cs.StringVar(&o.clockDomain, "domain", "", "follow `NAME` (default: the active domain after -f/-c)")
	cs.Uint64Var(&o.untilTick, "until-tick", 0, "exit 0 once `N` tick frames have arrived (0: no limit)")
	cs.BoolVar(&o.waitStart, "wait-start", false, "with --until-tick, wait for a stopped domain's START instead of exiting 4")
	cs.DurationVar(&o.clockTimeout, "timeout", 0, "exit 1 if the condition is not met within `D` (0: no limit)")
	if err := cs.Parse(rest[1:]); err != nil {
		return o, flagParseError(cs, "clock", err)
	}
	if extra := cs.Args(); len(extra) > 0 {
		return o, usageErrorf("clock: unexpected argument %q", extra[0])
	}
	if o.clockTimeout < 0 {
		return o, usageErrorf("clock: negative --timeout %s; give a positive duration or 0 for none", o.clockTimeout)
	}
	return o, nil
}

// usageText is what --help prints.
const usageText = `nspl - the NSPL domain-clock shell and script runner

Usage:
  nspl [flags]                          interactive shell (stdin is a terminal)
  nspl [flags] < script.nspl            run piped stdin as a script
  nspl [flags] -f FILE [-f FILE ...]    run script files in order (- is stdin)
  nspl [flags] -c 'STMT; ...'           run statements given as text
  nspl [flags] clock [clock flags]      follow a domain clock, after any -f/-c setup
  nspl [flags] backup [--domain NAME] --to PATH
                                        write a backup archive, after any -f/-c setup
  nspl [flags] restore --from PATH [--domain NAME [--as NEW]] [--resume] [--dry-run]
                                        restore domains from a backup archive
  nspl serve --node NAME --api-addr HOST:PORT [serve flags]
                                        run a node (see README: a secure 3-node cluster)
  nspl cert ca|node NAME|client NAME    make development certificates (nspl cert --help)
  nspl fmt [--check] [--diff] [FILE|DIR|-]...
                                        lay out .nspl files canonically (nspl fmt --help)
  nspl test [--rewrite] [--junit FILE] [--parallel N] [FILE|DIR]...
                                        run .nspl scripts under virtual time and compare
                                        their output with NAME.out (nspl test --help)
  nspl [--connect URL] lsp              a Language Server for .nspl files on stdin and
                                        stdout, for editors (nspl lsp --help)
  nspl --connect URL leave              the node at URL leaves its cluster
  nspl --connect URL remove NODE        remove NODE from the cluster
  nspl [flags] node cordon|uncordon|drain|remove NODE
                                        node maintenance (nspl help node)
  nspl help [COMMAND]                   a command's flags and examples (or COMMAND --help)
  nspl version                          version and build information (or --version)
  nspl completion bash|zsh|fish         print a shell completion script

Flags:
  -c TEXT               run the statements in TEXT (repeatable, mixes with -f in order)
  -f FILE               run the statements in FILE (repeatable; - reads stdin)
  --continue-on-error   keep running after a failed statement; the exit code is still 1
  --echo                print each statement before its result
  -v NAME=VALUE         set a variable: :NAME in a statement stands for VALUE,
                        :'NAME' for VALUE as a quoted literal (repeatable)
  -o FILE               write replies to FILE (created 0600) instead of stdout;
                        errors still go to stderr
  -1, --single-transaction
                        run the -c/-f input as one transaction: BEGIN after its
                        leading USE, COMMIT at the end, REVERT on the first failure
  --format FORMAT       result format: table (default), json, plain or csv
  -q, --quiet           print result sets only: no messages, no shell banner
  --data-dir DIR        keep the node's catalog in DIR (default: in memory, gone on exit)
  --verbose             log the node's internals to stderr
  --virtual-time        run the embedded node on virtual time: its clock stands
                        still while statements run and, whenever the script
                        waits (\sleep, \wait, nspl clock), jumps to the next
                        timer, so the same script prints the same bytes, clock
                        frames included, in no wall time (see README: Testing
                        your scripts); not with --connect, --data-dir or --console
  --virtual-start TIMESTAMP
                        with --virtual-time, where virtual UTC starts (default
                        2030-01-01T00:00:00Z)
  --console HOST:PORT   while the interactive shell runs, serve the embedded node's
                        web console on this loopback address (port 0: a free one);
                        the login link with its one-time token is printed at start
  --connect URL         run against the node at URL (https://HOST:PORT; a comma-
                        separated list is tried in order) instead of an embedded one
  --ca FILE             trust the cluster CA certificate in FILE
  --cert FILE, --key FILE
                        authenticate with a client certificate (nspl cert client NAME)
  --token-file FILE     authenticate with the bearer token in FILE
  --profile NAME        take the connection flags not given from [profile NAME]
                        of $XDG_CONFIG_HOME/nspl/config (~/.config/nspl/config);
                        without one, NSPL_CONNECT, NSPL_CA, NSPL_CERT, NSPL_KEY
                        and NSPL_TOKEN_FILE stand in for the flags
  --overwrite           let BACKUP replace an existing file that is not an nspl
                        archive (refused by default)
  --read-consistency LEVEL
                        with --connect, what reads promise: local (the node's own
                        state, the default) or linearizable (each read confirmed
                        through the cluster's leader)
  --suggest TEXT [--cursor BYTE]
                        print the completions of TEXT at byte BYTE (default: its
                        end) as JSON; domain names from --connect or --data-dir
  -h, --help            print this help

Serve flags (nspl serve):
  --node NAME           this node's name, as its certificate carries it
  --data-dir DIR        keep the node's catalog in DIR
  --raft-addr HOST:PORT listen for raft (TLS) on HOST:PORT
  --api-addr HOST:PORT  serve sessions, /v1/peer/, /healthz and /metrics
  --bootstrap           start a new cluster with this node as its first voter
  --join API-ADDR       join the cluster through a member's API address
  --pki DIR             TLS material from nspl cert (ca.crt, node-NAME.crt/.key)
  --ca F --cert F --key F
                        TLS material from files instead
  --token-file FILE     also admit clients presenting the bearer token in FILE
  --insecure            plain HTTP, no TLS: loopback addresses and one node only
  --console=false       serve no web console under /console/ (served by default)
  --heartbeat-timeout D, --election-timeout D, --leader-lease-timeout D,
  --probe-interval D    raft and health-probe timers (0: the defaults)
  --handshake-timeout D TLS handshake and request-header bound (default 10s)
  --idle-timeout D      close a connection with no open request (default 2m)
  --session-idle-timeout D
                        close a session that sends nothing (default 10m)
  --message-timeout D   bound on one client message's arrival (default 30s)
  --max-sessions N, --max-sessions-per-identity N
                        session cap, and one identity's share (default 1024, 64)
  --max-archive-uploads N, --max-archive-uploads-per-identity N
                        archives received at once for RESTORE and DESCRIBE
                        BACKUP, each at most 64 MiB, and one identity's
                        share (default 2, 1)
  --upload-timeout D    drop an upload whose statement does not follow
                        within D of its first piece (default 5m)
  --max-token-guesses-per-address N, --max-token-guesses N
                        wrong bearer tokens a minute from one address
                        (IPv4, IPv6 /64), and from all addresses that never
                        presented the right one, before 429 (default 10, 100)
  --max-clock-offset D  refuse clock progress whose tick or UTC is more than D
                        ahead of this node's clock (default 500ms)
  --max-domains N       refuse a CREATE DOMAIN or restore through this node
                        that would leave more than N domains (default 1000000)

Clock flags (nspl clock):
  --domain NAME         follow NAME (default: the active domain left by -f/-c setup)
  --until-tick N        exit 0 once N tick frames have arrived (0: no limit);
                        on a clock that cannot tick (stopped, or unpaced)
                        exit 4 at once
  --wait-start          with --until-tick, wait for a stopped domain's START
                        instead of exiting 4
  --timeout D           exit 1 if the domain has not ended or N ticks have not
                        arrived within D (for example 30s; 0: no limit)
  Ctrl-C detaches from the clock and exits 1.

Backup and restore (nspl backup, nspl restore) run BACKUP or RESTORE on the
node (--data-dir DIR for a durable catalog) and report like a statement;
--format json prints one JSON object. DESCRIBE BACKUP '<path>'; describes an
archive without changing anything. With --connect the archive file is on this
machine, never the node's: BACKUP writes it here (0600, crash-safe) and RESTORE
and DESCRIBE BACKUP read it here and send it to the node, which verifies it.

Exit codes:
  0  success
  1  a statement failed (or nspl clock timed out or was interrupted)
  2  usage error
  3  I/O error (a file, the terminal, the node's storage, or reaching the
     node: connection and TLS failures)
  4  nspl clock --until-tick on a clock that cannot tick (unpaced, or stopped
     without --wait-start)
  nspl fmt has its own: 1 unformatted (--check), 3 syntax error, 4 I/O error.
  nspl test has its own: 1 an output differs from its .out, 3 a script
  cannot run.

Inside the shell, type help or \? for the statements.
`
