package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// commands are the subcommand names nspl knows, for nspl help and for "did
// you mean" on a mistyped one.
var commands = []string{"backup", "cert", "clock", "completion", "fmt", "help", "leave", "lsp", "node", "remove", "restore", "serve", "test", "version"}

// helpRequest is what a command's flag parsing returns for -h or --help: it
// wraps flag.ErrHelp and carries the command and the flag set it parsed, so
// the help printed lists exactly the flags that command takes.
type helpRequest struct {
	command string // "" is nspl itself
	flags   *flag.FlagSet
}

func (h *helpRequest) Error() string { return "help requested" }
func (h *helpRequest) Unwrap() error { return flag.ErrHelp }

// flagParseError turns what fs.Parse returned for command ("" for nspl
// itself) into the error Run reports: a helpRequest for -h or --help, else a
// usage error that names the nearest flag when one was mistyped.
func flagParseError(fs *flag.FlagSet, command string, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return &helpRequest{command: command, flags: fs}
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		// The flag package names it with one dash whatever was typed.
		msg = "unknown flag " + flagSpelling(name)
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if near, ok := nearest(name, names); ok {
			msg += "; did you mean " + flagSpelling(near) + "?"
		}
	}
	if command != "" {
		msg = command + ": " + msg
	}
	return &RunError{Kind: ErrUsage, Err: errors.New(msg), Help: command}
}

// parseFlagsAndPaths parses args with fs, taking flags before, between or
// after the paths, which it returns in order; "--" ends the flags.
func parseFlagsAndPaths(fs *flag.FlagSet, command string, args []string) ([]string, error) {
	var paths []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, flagParseError(fs, command, err)
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(paths, rest...), nil
		}
		if len(rest) == 0 {
			break
		}
		paths = append(paths, rest[0])
		args = rest[1:]
	}
	return paths, nil
}

// firstOnly are the commands Run recognises only as its first argument:
// they take their own flags, not nspl's.
var firstOnly = []string{"cert", "fmt", "test"}

// unexpectedArgument is the usage error for a word where a subcommand or
// nothing belongs: a mistyped subcommand gets the nearest one, and a
// command that must come first is told so.
func unexpectedArgument(arg string) error {
	for _, c := range firstOnly {
		if arg == c {
			return usageErrorf("nspl %s takes only its own flags and comes first: nspl %s [flags] ... (nspl %s --help)", c, c, c)
		}
	}
	if near, ok := nearest(arg, commands); ok {
		return usageErrorf("unknown command %q; did you mean %s? (nspl help lists the commands)", arg, near)
	}
	return usageErrorf("unexpected argument %q; statements go in -c 'TEXT' or -f FILE", arg)
}

// flagSpelling is how help and messages write a flag: -c and -f with one
// dash, every longer name with two.
func flagSpelling(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// nearest returns the candidate closest to word by edit distance, when it
// is close enough to be a plausible slip: one edit for words of up to four
// bytes, two for longer ones. Ties go to the alphabetically first.
func nearest(word string, candidates []string) (string, bool) {
	limit := 1
	if len(word) > 4 {
		limit = 2
	}
	if len(word) < 2 {
		return "", false
	}
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	best, bestDist := "", limit+1
	for _, c := range sorted {
		if d := editDistance(strings.ToLower(word), c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, bestDist <= limit
}

// editDistance is the optimal string alignment distance between a and b,
// in bytes: insertions, deletions, substitutions and swaps of two adjacent
// bytes (dri for dir) each count one.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// commandHelp is the hand-written part of a subcommand's help; its flags
// are listed from the flag set the command parses with.
type commandHelp struct {
	usage    string // the synopsis lines, without "Usage:"
	about    string // what the command does
	examples string // example command lines
	// common is true for commands that also take nspl's own flags (-f, -c,
	// --format, --connect …); help lists those by name only.
	common bool
}

var commandHelps = map[string]commandHelp{
	"serve": {
		usage: "nspl serve --node NAME --api-addr HOST:PORT --raft-addr HOST:PORT --pki DIR\n" +
			"           [--bootstrap | --join API-ADDR] [--data-dir DIR] [flags]",
		about: "Runs one node of a cluster: raft on --raft-addr, sessions, the interconnect,\n" +
			"/healthz and /metrics on --api-addr, all over TLS of one cluster CA (nspl cert).\n" +
			"SIGTERM or SIGINT drains sessions for at most --drain-timeout, then stops.",
		examples: "nspl serve --node n1 --pki certs --data-dir n1 --raft-addr 127.0.0.1:7001 \\\n" +
			"    --api-addr 127.0.0.1:8001 --bootstrap\n" +
			"nspl serve --node n2 --pki certs --data-dir n2 --raft-addr 127.0.0.1:7002 \\\n" +
			"    --api-addr 127.0.0.1:8002 --join 127.0.0.1:8001\n" +
			"nspl serve --node dev --api-addr 127.0.0.1:8001 --insecure",
	},
	"clock": {
		usage: "nspl [-f FILE|-c TEXT ...] clock [--domain NAME] [--until-tick N [--wait-start]] [--timeout D]",
		about: "Follows a domain's clock after any -f/-c setup, on the same node, and prints the\n" +
			"attach reply and every frame, one line each (--format json: one object each).\n" +
			"Exits 0 once N ticks have arrived or the domain ends, 1 on --timeout or Ctrl-C,\n" +
			"4 at once when --until-tick is given a clock that cannot tick (unpaced, or\n" +
			"stopped without --wait-start).",
		examples: "nspl --connect https://127.0.0.1:8001 --ca certs/ca.crt clock --domain prod\n" +
			"nspl -c 'CREATE PACED DOMAIN p WITH PERIOD 1s SKEW 0; USE p; START;' clock --until-tick 3",
		common: true,
	},
	"backup": {
		usage: "nspl [flags] backup [--domain NAME] --to PATH",
		about: "Runs BACKUP CLUSTER (or BACKUP DOMAIN NAME with --domain) after any -f/-c setup\n" +
			"and reports like a statement. With --connect the archive is written on this\n" +
			"machine (0600, crash-safe), never on the node.",
		examples: "nspl --data-dir /var/lib/nspl backup --to ~/all.nsplbak\n" +
			"nspl --connect https://127.0.0.1:8001 --ca certs/ca.crt backup --domain prod --to prod.nsplbak",
		common: true,
	},
	"restore": {
		usage: "nspl [flags] restore --from PATH [--domain NAME [--as NEW]] [--resume] [--dry-run]",
		about: "Runs RESTORE CLUSTER (or RESTORE DOMAIN with --domain) after any -f/-c setup and\n" +
			"reports like a statement; all or nothing. With --connect the archive is read on\n" +
			"this machine and sent to the node, which verifies it.",
		examples: "nspl --data-dir /var/lib/nspl restore --from ~/all.nsplbak --dry-run\n" +
			"nspl --data-dir /var/lib/nspl restore --from ~/prod.nsplbak --domain prod --as rehearsal --resume",
		common: true,
	},
	"leave": {
		usage: "nspl --connect URL [--ca FILE --cert FILE --key FILE | --token-file FILE] leave",
		about: "Asks the node at --connect to leave its cluster. The connection flags may also\n" +
			"follow the subcommand's name.",
		examples: "nspl --connect https://127.0.0.1:8003 --ca certs/ca.crt \\\n" +
			"    --cert certs/client-ops.crt --key certs/client-ops.key leave",
	},
	"remove": {
		usage: "nspl --connect URL [--ca FILE --cert FILE --key FILE | --token-file FILE] remove [--force] NODE",
		about: "Asks the cluster, through the node at --connect, to remove NODE from its\n" +
			"membership: a node that is gone. A node still live is refused unless --force\n" +
			"(it should leave: nspl leave against it). The connection flags may also follow\n" +
			"the subcommand's name.",
		examples: "nspl --connect https://127.0.0.1:8001 --ca certs/ca.crt \\\n" +
			"    --cert certs/client-ops.crt --key certs/client-ops.key remove n3",
	},
	"node": {
		usage: "nspl [--connect URL [credentials]] node cordon|uncordon|drain NODE\n" +
			"  nspl --connect URL [credentials] node remove [--force] NODE",
		about: "Node maintenance. cordon, uncordon and drain run CORDON, UNCORDON or DRAIN\n" +
			"NODE on the node at --connect (or the embedded node) and report like a\n" +
			"statement: a cordoned node keeps the clocks it owns but is given no new one;\n" +
			"drain cordons it and moves its clocks to other nodes one at a time. remove is\n" +
			"nspl remove. An unknown node, or a drain with nowhere to move a clock, exits 1.",
		examples: "nspl --connect https://127.0.0.1:8001 --ca certs/ca.crt \\\n" +
			"    --cert certs/client-ops.crt --key certs/client-ops.key node drain n3",
	},
	"lsp": {
		usage: "nspl lsp [--connect URL [--ca FILE --cert FILE --key FILE | --token-file FILE]]",
		about: "Serves the Language Server Protocol (JSON-RPC 2.0, Content-Length framing) on\n" +
			"stdin and stdout for an editor: diagnostics from the parser and planner,\n" +
			"completion of keywords, statements and the domains the file creates (with\n" +
			"--connect also the node's), formatting as nspl fmt does, hover help on\n" +
			"keywords, and the file's domains as symbols. Documents sync whole. A message\n" +
			"over 16 MiB is skipped with an error reply; input that is not LSP framing ends\n" +
			"the server. Exits 0 after shutdown and exit, 1 on exit without shutdown.",
		examples: "nspl lsp\n" +
			"nspl lsp --connect https://127.0.0.1:8001 --ca certs/ca.crt --token-file token",
	},
	"help": {
		usage:    "nspl help [COMMAND]",
		about:    "Prints nspl's help, or COMMAND's: the same as nspl COMMAND --help.",
		examples: "nspl help\nnspl help serve",
	},
	"version": {
		usage: "nspl version | nspl --version",
		about: "Prints the module version, the VCS revision and time the binary was built from,\n" +
			"and the Go toolchain. A binary built outside a module version says (devel); one\n" +
			"built without VCS information says so.",
		examples: "nspl --version",
	},
	"completion": {
		usage: "nspl completion bash|zsh|fish",
		about: "Prints a completion script for the shell. It completes subcommands and flags,\n" +
			"and statements after -c and domain names after --domain live, by running\n" +
			"nspl --suggest with the connection flags already on the command line.",
		examples: "source <(nspl completion bash)                                  # bash, now\n" +
			"nspl completion bash > ~/.local/share/bash-completion/completions/nspl\n" +
			"nspl completion zsh > \"${fpath[1]}/_nspl\"                        # zsh\n" +
			"nspl completion fish > ~/.config/fish/completions/nspl.fish     # fish",
	},
}

// printHelp prints the help err asks for: a command's when err is a
// helpRequest for one, else nspl's.
func (m *Main) printHelp(err error) error {
	text := usageText
	var h *helpRequest
	if errors.As(err, &h) && h.command != "" {
		text = commandHelpText(h.command, h.flags)
	}
	return m.writeText(text)
}

// writeText writes a help or usage text to stdout; a write that fails is
// an I/O error.
func (m *Main) writeText(text string) error {
	if _, err := io.WriteString(m.Stdout, text); err != nil {
		return ioError(err)
	}
	return nil
}

// commandHelpText renders command's help with the flags of fs.
func commandHelpText(command string, fs *flag.FlagSet) string {
	ch := commandHelps[command]
	var b strings.Builder
	fmt.Fprintf(&b, "nspl %s\n\nUsage:\n", command)
	for _, line := range strings.Split(ch.usage, "\n") {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	if ch.about != "" {
		fmt.Fprintf(&b, "\n%s\n", ch.about)
	}
	common := map[string]bool{}
	if ch.common {
		cf := flag.NewFlagSet("", flag.ContinueOnError)
		addCommonFlags(cf, &options{})
		cf.VisitAll(func(f *flag.Flag) { common[f.Name] = true })
	}
	var own, shared []string
	if fs != nil {
		fs.VisitAll(func(f *flag.Flag) {
			if common[f.Name] {
				shared = append(shared, flagSpelling(f.Name))
				return
			}
			own = append(own, flagLine(f))
		})
	}
	b.WriteString("\nFlags:\n")
	for _, l := range own {
		b.WriteString(l)
	}
	b.WriteString("  -h, --help            print this help\n")
	if len(shared) > 0 {
		b.WriteString("\nAlso nspl's own flags (see nspl --help), before or after the command's name:\n")
		b.WriteString(wrap("  ", strings.Join(shared, " "), 80))
	}
	if ch.examples != "" {
		b.WriteString("\nExamples:\n")
		for _, line := range strings.Split(ch.examples, "\n") {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	return b.String()
}

// flagLine renders one flag as help lists it: the spelling and value name
// in a 22-column field, then its usage, wrapped, with its default when the
// usage does not already say it.
func flagLine(f *flag.Flag) string {
	name, usage := flag.UnquoteUsage(f)
	head := "  " + flagSpelling(f.Name)
	if name != "" {
		head += " " + strings.ToUpper(name)
	}
	switch def := f.DefValue; def {
	case "", "0", "false", "0s", "[]":
	default:
		if strings.HasSuffix(def, "m0s") { // 2m0s is written 2m, 1h0m0s 1h
			def = strings.TrimSuffix(strings.TrimSuffix(def, "0s"), "0m")
		}
		if !strings.Contains(usage, "default") {
			usage += " (default " + def + ")"
		}
	}
	const col = 24
	if len(head) >= col-1 {
		return head + "\n" + wrap(strings.Repeat(" ", col), usage, 80)
	}
	body := wrap(strings.Repeat(" ", col), usage, 80)
	return head + body[len(head):]
}

// wrap fills text into lines of at most width bytes, each starting with
// indent.
func wrap(indent, text string, width int) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
	return b.String()
}

// runHelp runs nspl help [COMMAND]: COMMAND's help is nspl COMMAND --help.
func (m *Main) runHelp(ctx context.Context, args []string) error {
	switch {
	case len(args) == 0:
		return m.printHelp(flag.ErrHelp)
	case len(args) > 1:
		return usageErrorf("help: give one command, as in nspl help serve")
	}
	topic := args[0]
	known := false
	for _, c := range commands {
		known = known || c == topic
	}
	if !known {
		if near, ok := nearest(topic, commands); ok {
			return usageErrorf("help: unknown command %q; did you mean %s?", topic, near)
		}
		return usageErrorf("help: unknown command %q; the commands are %s", topic, strings.Join(commands, ", "))
	}
	if topic == "help" || topic == "version" || topic == "completion" {
		return m.printHelp(&helpRequest{command: topic})
	}
	return m.Run(ctx, []string{topic, "--help"})
}
