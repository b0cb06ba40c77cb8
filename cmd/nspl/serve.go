package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/metrics"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/serve"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// serveOptions are the flags of nspl serve.
type serveOptions struct {
	node      string
	dataDir   string
	raftAddr  string
	apiAddr   string
	join      string
	bootstrap bool
	pkiDir    string
	ca        string
	cert      string
	key       string
	tokenFile string
	insecure  bool
	console   bool
	verbose   bool
	logFormat string // "text" or "json"

	metricsAddr string // the plain-HTTP /metrics, /livez, /readyz listener; empty serves none

	allowedHosts hostList // names besides loopback a checked listener answers (--allowed-host)

	heartbeatTimeout   time.Duration
	electionTimeout    time.Duration
	leaderLeaseTimeout time.Duration
	probeInterval      time.Duration
	drainTimeout       time.Duration
	maxClockOffset     time.Duration
	maxDomains         int

	limits            server.Limits
	maxSessions       int
	maxArchiveUploads int
	maxUploadsPerID   int
	transactions      session.Options // only its transaction limits are set
}

// defaultDrainTimeout bounds how long nspl serve lets its sessions drain on
// SIGTERM or SIGINT before it ends the rest.
const defaultDrainTimeout = 10 * time.Second

// defaultMetricsAddr is the metrics listener's default: loopback only, on a
// free port (printed at start), so several nodes on one host never collide;
// a scraper's deployment gives a fixed --metrics-addr.
const defaultMetricsAddr = "127.0.0.1:0"

// parseServeArgs parses
//
//	nspl serve --node NAME --data-dir DIR --raft-addr HOST:PORT --api-addr HOST:PORT
//	           [--join API-ADDR] [--bootstrap] [--pki DIR | --ca F --cert F --key F]
//	           [--token-file F] [--insecure] [--allowed-host NAME]... [--log-format text|json] [--handshake-timeout D] [--idle-timeout D]
//	           [--session-idle-timeout D] [--message-timeout D] [--max-sessions N]
//	           [--max-sessions-per-identity N] [--max-archive-uploads N] [--max-archive-uploads-per-identity N]
//	           [--upload-timeout D] [--max-token-guesses-per-address N] [--max-token-guesses N]
//	           [--max-transaction-steps N] [--max-transaction-bytes N] [--transaction-idle-timeout D]
func parseServeArgs(o options, args []string) (options, error) {
	s := &serveOptions{}
	fs := flag.NewFlagSet("nspl serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&s.node, "node", "", "this node's `NAME` (its certificate's name)")
	fs.StringVar(&s.dataDir, "data-dir", "", "keep the node's catalog in `DIR`")
	fs.StringVar(&s.raftAddr, "raft-addr", "", "listen for raft on `HOST:PORT`")
	fs.StringVar(&s.apiAddr, "api-addr", "", "serve sessions, the interconnect and metrics on `HOST:PORT`")
	fs.StringVar(&s.metricsAddr, "metrics-addr", defaultMetricsAddr, "serve /metrics, /livez and /readyz over plain HTTP, without authentication, on `HOST:PORT` (empty: none)")
	fs.Var(&s.allowedHosts, "allowed-host", "also answer requests whose Host is `NAME` on a listener that answers only loopback names (plain HTTP, TLS on loopback, the metrics listener's loopback side; repeatable)")
	fs.StringVar(&s.join, "join", "", "join the cluster through the member at `API-ADDR` (several, comma-separated)")
	fs.BoolVar(&s.bootstrap, "bootstrap", false, "bootstrap a new cluster with this node as its first voter")
	fs.StringVar(&s.pkiDir, "pki", "", "load ca.crt and node-NAME.crt/.key from `DIR` (nspl cert)")
	fs.StringVar(&s.ca, "ca", "", "the cluster CA certificate `FILE`")
	fs.StringVar(&s.cert, "cert", "", "this node's certificate `FILE`")
	fs.StringVar(&s.key, "key", "", "this node's private key `FILE`")
	fs.StringVar(&s.tokenFile, "token-file", "", "also admit clients presenting the bearer token in `FILE`")
	fs.BoolVar(&s.insecure, "insecure", false, "serve plain HTTP without TLS (loopback only, single node)")
	fs.BoolVar(&s.console, "console", true, "serve the web console under /console/ on the API listener (--console=false: none)")
	fs.BoolVar(&s.verbose, "verbose", false, "log the node's internals to stderr")
	fs.StringVar(&s.logFormat, "log-format", "text", "write stderr logs as `text` (logfmt) or json (one object a line)")
	fs.DurationVar(&s.heartbeatTimeout, "heartbeat-timeout", 0, "raft heartbeat timeout `D` (0: the default)")
	fs.DurationVar(&s.electionTimeout, "election-timeout", 0, "raft election timeout `D` (0: the default)")
	fs.DurationVar(&s.leaderLeaseTimeout, "leader-lease-timeout", 0, "raft leader lease timeout `D` (0: the default)")
	fs.DurationVar(&s.probeInterval, "probe-interval", 0, "application health probe interval `D` (0: the default)")
	fs.IntVar(&s.maxDomains, "max-domains", cluster.DefaultMaxDomains, "refuse a CREATE DOMAIN or restore through this node that would leave more than `N` domains in the catalog")
	fs.DurationVar(&s.maxClockOffset, "max-clock-offset", clockrt.DefaultMaxClockOffset, "refuse clock progress whose tick or UTC is more than `D` ahead of this node's clock")
	fs.DurationVar(&s.limits.HandshakeTimeout, "handshake-timeout", server.DefaultHandshakeTimeout, "close an API connection whose TLS handshake or request headers take longer than `D`")
	fs.DurationVar(&s.limits.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "close an API connection with no open request after `D`")
	fs.DurationVar(&s.limits.SessionIdleTimeout, "session-idle-timeout", server.DefaultSessionIdleTimeout, "close a session whose client sends nothing for `D` (clients ping well within it)")
	fs.DurationVar(&s.limits.MessageTimeout, "message-timeout", server.DefaultMessageTimeout, "close a session whose client takes longer than `D` to send one message")
	fs.IntVar(&s.maxSessions, "max-sessions", server.DefaultMaxSessions, "serve at most `N` sessions at once")
	fs.IntVar(&s.limits.MaxSessionsPerIdentity, "max-sessions-per-identity", server.DefaultMaxSessionsPerIdentity, "serve at most `N` sessions of one client certificate or token at once")
	fs.IntVar(&s.maxArchiveUploads, "max-archive-uploads", server.DefaultMaxArchiveUploads, "receive at most `N` archives (RESTORE, DESCRIBE BACKUP) at once")
	fs.IntVar(&s.maxUploadsPerID, "max-archive-uploads-per-identity", server.DefaultMaxArchiveUploadsPerIdentity, "receive at most `N` archives of one client certificate or token at once")
	fs.DurationVar(&s.limits.UploadTimeout, "upload-timeout", server.DefaultUploadTimeout, "drop an uploaded archive whose statement does not follow within `D` of its first piece")
	fs.IntVar(&s.limits.TokenGuessesPerAddress, "max-token-guesses-per-address", server.DefaultTokenGuessesPerAddress, "answer 429 to an address (IPv4, or IPv6 /64) for the rest of a minute once it sent `N` wrong bearer tokens in it")
	fs.IntVar(&s.limits.TokenGuesses, "max-token-guesses", server.DefaultTokenGuesses, "answer 429 to addresses that never presented the right bearer token once all sent `N` wrong ones in a minute")
	fs.DurationVar(&s.drainTimeout, "drain-timeout", defaultDrainTimeout, "on SIGTERM or SIGINT, let sessions drain for at most `D` before stopping")
	fs.IntVar(&s.transactions.MaxTransactionSteps, "max-transaction-steps", session.DefaultMaxTransactionSteps, "refuse a transaction step past the `N`th")
	fs.IntVar(&s.transactions.MaxTransactionBytes, "max-transaction-bytes", session.DefaultMaxTransactionBytes, "refuse a transaction step that takes its queued statement text past `N` bytes")
	fs.DurationVar(&s.transactions.TransactionIdleTimeout, "transaction-idle-timeout", session.DefaultTransactionIdleTimeout, "revert an open transaction whose session runs no statement for `D`")
	if err := fs.Parse(args); err != nil {
		return o, flagParseError(fs, "serve", err)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--handshake-timeout", s.limits.HandshakeTimeout}, {"--idle-timeout", s.limits.IdleTimeout},
		{"--session-idle-timeout", s.limits.SessionIdleTimeout}, {"--message-timeout", s.limits.MessageTimeout},
		{"--upload-timeout", s.limits.UploadTimeout},
	} {
		if d.v <= 0 {
			return o, usageErrorf("serve: %s %s: give a positive duration such as 30s", d.flag, d.v)
		}
	}
	if s.maxSessions <= 0 || s.limits.MaxSessionsPerIdentity <= 0 || s.maxArchiveUploads <= 0 {
		return o, usageErrorf("serve: --max-sessions, --max-sessions-per-identity and --max-archive-uploads must be positive")
	}
	if s.maxUploadsPerID <= 0 || s.limits.TokenGuessesPerAddress <= 0 || s.limits.TokenGuesses <= 0 {
		return o, usageErrorf("serve: --max-archive-uploads-per-identity, --max-token-guesses-per-address and --max-token-guesses must be positive")
	}
	if t := s.transactions; t.MaxTransactionSteps <= 0 || t.MaxTransactionBytes <= 0 || t.TransactionIdleTimeout <= 0 {
		return o, usageErrorf("serve: --max-transaction-steps, --max-transaction-bytes and --transaction-idle-timeout must be positive")
	}
	if extra := fs.Args(); len(extra) > 0 {
		return o, usageErrorf("serve: unexpected argument %q", extra[0])
	}
	if s.logFormat != "text" && s.logFormat != "json" {
		return o, usageErrorf("serve: --log-format %q: give text or json", s.logFormat)
	}
	if s.drainTimeout < 0 {
		return o, usageErrorf("serve: --drain-timeout %s is negative; give 0 to end sessions at once", s.drainTimeout)
	}
	switch {
	case s.node == "":
		return o, usageErrorf("serve: --node NAME is required")
	case s.apiAddr == "":
		return o, usageErrorf("serve: --api-addr HOST:PORT is required")
	case s.insecure && (s.pkiDir != "" || s.cert != ""):
		return o, usageErrorf("serve: --insecure serves without TLS; drop --pki/--cert or --insecure")
	case !s.insecure && s.pkiDir == "" && s.cert == "":
		return o, usageErrorf("serve: give TLS material (--pki DIR, or --ca, --cert and --key; nspl cert makes them) or --insecure on loopback")
	case s.pkiDir != "" && (s.ca != "" || s.cert != "" || s.key != ""):
		return o, usageErrorf("serve: --pki and --ca/--cert/--key exclude each other")
	case s.cert != "" && (s.ca == "" || s.key == ""):
		return o, usageErrorf("serve: --cert needs --ca and --key")
	case s.maxDomains < 1:
		return o, usageErrorf("serve: --max-domains %d is not a positive number of domains; pass one such as %d", s.maxDomains, cluster.DefaultMaxDomains)
	case s.maxClockOffset < 0:
		return o, usageErrorf("serve: --max-clock-offset %s is negative; pass a duration such as 500ms", s.maxClockOffset)
	case s.bootstrap && s.join != "":
		return o, usageErrorf("serve: --bootstrap starts a new cluster and --join joins one; give one")
	case s.insecure && (s.join != "" || s.raftAddr != "" || s.bootstrap):
		return o, usageErrorf("serve: --insecure runs one node without TLS; a cluster needs certificates (nspl cert), so drop --join, --raft-addr and --bootstrap")
	case !s.insecure && s.raftAddr == "":
		return o, usageErrorf("serve: --raft-addr HOST:PORT is required: the address this node's raft listens on")
	}
	if err := pki.ValidName(s.node); err != nil {
		return o, usageErrorf("serve: --node: %v", err)
	}
	if s.insecure {
		if err := wire.CheckLoopback(s.apiAddr); err != nil {
			return o, usageErrorf("serve: --insecure: %v", err)
		}
	}
	if err := server.ValidateAllowedHosts(s.allowedHosts); err != nil {
		return o, usageErrorf("serve: --allowed-host: %v", err)
	}
	if _, _, err := net.SplitHostPort(s.metricsAddr); s.metricsAddr != "" && err != nil {
		return o, usageErrorf("serve: --metrics-addr %q: give HOST:PORT, such as 127.0.0.1:9464, or an empty value for no metrics listener", s.metricsAddr)
	}
	o.serve = s
	return o, nil
}

// material loads the node's TLS material, refusing a key file that is
// not private to its owner.
func (s *serveOptions) material() (*pki.Material, error) {
	if s.insecure {
		return nil, nil
	}
	if s.pkiDir != "" {
		if err := checkPrivate("--pki", pki.NodeKeyPath(s.pkiDir, s.node)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		// A missing file is LoadNode's to report: it names the nspl cert
		// command that makes it.
		return pki.LoadNode(s.pkiDir, s.node)
	}
	if err := checkPrivate("--key", s.key); err != nil {
		return nil, err
	}
	return pki.LoadFiles(s.ca, s.cert, s.key)
}

func (s *serveOptions) token() (string, error) {
	if s.tokenFile == "" {
		return "", nil
	}
	if err := checkPrivate("--token-file", s.tokenFile); err != nil {
		return "", err
	}
	b, err := readFileLimited(s.tokenFile, maxTokenBytes)
	if err != nil {
		return "", ioError(fmt.Errorf("read the token: %w", err))
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", usageErrorf("serve: --token-file %q is empty", s.tokenFile)
	}
	return t, nil
}

// runServe is nspl serve: it runs the node and its API listener until
// Ctrl-C, SIGTERM (ctx ends) or a leave. Both signals start the same
// graceful shutdown: new sessions are refused, open sessions finish their
// running statement, get an end frame for each attached clock and end,
// for at most --drain-timeout; only then do the listener and the member
// stop, so clock authority, progress production and delivery and local
// installation keep running while sessions drain.
func (m *Main) runServe(ctx context.Context, s *serveOptions) error {
	mat, err := s.material()
	if err != nil {
		if errors.Is(err, ErrIO) {
			return err
		}
		return ioError(fmt.Errorf("serve: load the node's TLS material: %w", err))
	}
	token, err := s.token()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopIntr := m.routeInterrupts(ctx)
	defer stopIntr()
	defer m.setInterruptHandler(cancel)()

	logger := m.serveLogger(s)
	ln, err := net.Listen("tcp", s.apiAddr)
	if err != nil {
		return ioError(fmt.Errorf("serve: listen on %s: %w", s.apiAddr, err))
	}
	var mln net.Listener
	if s.metricsAddr != "" {
		if mln, err = net.Listen("tcp", s.metricsAddr); err != nil {
			_ = ln.Close()
			return ioError(fmt.Errorf("serve: --metrics-addr: listen on %s: %w", s.metricsAddr, err))
		}
		fmt.Fprintf(m.Stdout, "nspl serve: node %s metrics on http://%s%s\n", s.node, mln.Addr(), metrics.MetricsPath)
	}

	proc, err := serve.Start(ctx, s.processConfig(mat, token, ln, mln, logger, m.raftLevel(s.verbose), cancel))
	if err != nil {
		if ctx.Err() != nil {
			return &RunError{Kind: ErrStatementFailed, Err: ErrInterrupted}
		}
		if errors.Is(err, server.ErrConfig) {
			return usageErrorf("serve: %v", err)
		}
		if errors.Is(err, cluster.ErrConfig) {
			// Flags that cannot start a member, such as no --bootstrap
			// or --join for an empty --data-dir.
			return usageErrorf("serve: start node %q: %w", s.node, err)
		}
		return ioError(fmt.Errorf("serve: start node %q: %w", s.node, err))
	}
	scheme := "https"
	if s.insecure {
		scheme = "http"
	}
	fmt.Fprintf(m.Stdout, "nspl serve: node %s serving %s://%s\n", s.node, scheme, ln.Addr())
	if s.console {
		fmt.Fprintf(m.Stdout, "nspl serve: node %s console at %s://%s/console/\n", s.node, scheme, ln.Addr())
	}
	how := "it left its cluster"
	select {
	case <-ctx.Done():
		how = "its sessions drained"
		if !m.drain(proc, s.drainTimeout, logger) {
			how = fmt.Sprintf("sessions still open after the %s drain timeout were ended", s.drainTimeout)
		}
	case <-proc.Done():
		err = proc.Err()
	}
	_ = proc.Close()
	if err != nil {
		return ioError(fmt.Errorf("serve: %w", err))
	}
	// One line for the operator, beside the start lines, whatever the log
	// level: a graceful stop is not silent.
	fmt.Fprintf(m.Stdout, "nspl serve: node %s shut down: %s\n", s.node, how)
	return nil
}

// processConfig is the serve.Config the flags give: the member (a lone
// node with --insecure), its API listener ln and metrics listener mln (nil:
// none), the API server's limits, and leave, which ends nspl serve once
// the node has left its cluster.
func (s *serveOptions) processConfig(mat *pki.Material, token string, ln, mln net.Listener, logger *slog.Logger, raftLevel slog.Level, leave func()) serve.Config {
	var join []string
	for _, j := range strings.Split(s.join, ",") {
		if j = strings.TrimSpace(j); j != "" {
			join = append(join, j)
		}
	}
	return serve.Config{
		Member: cluster.Config{
			Node: s.node, DataDir: s.dataDir, RaftAddr: s.raftAddr, APIAddr: s.apiAddr,
			Join: join, Bootstrap: s.bootstrap, Material: mat,
			HeartbeatTimeout: s.heartbeatTimeout, ElectionTimeout: s.electionTimeout,
			LeaderLeaseTimeout: s.leaderLeaseTimeout, ProbeInterval: s.probeInterval,
			MaxClockOffset: s.maxClockOffset, MaxDomains: s.maxDomains, Logger: logger, RaftLogLevel: raftLevel,
		},
		Insecure:        s.insecure,
		Listener:        ln,
		MetricsListener: mln,
		Server: server.Config{
			Token: token, MaxSessions: s.maxSessions, Limits: s.limits, MaxArchiveUploads: s.maxArchiveUploads,
			MaxArchiveUploadsPerIdentity: s.maxUploadsPerID, Session: s.transactions, Console: s.console,
			AllowedHosts: s.allowedHosts,
		},
		Left: leave,
	}
}

// drain lets proc's sessions drain for at most timeout, and reports
// whether they all ended by themselves.
func (m *Main) drain(proc *serve.Process, timeout time.Duration, logger *slog.Logger) bool {
	ctx, cancel := context.WithCancel(context.Background())
	src := m.TimeSource
	if src == nil {
		src = timesource.System()
	}
	t := src.NewTimer(timeout)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-t.C():
			cancel()
		case <-ctx.Done():
		}
	}()
	defer func() {
		cancel()
		<-done
		t.Stop()
	}()
	logger.Info("nspl serve: shutting down; sessions drain", "drain_timeout", timeout)
	if err := proc.Drain(ctx); err != nil {
		logger.Warn("nspl serve: sessions still open after the drain timeout are ended", "drain_timeout", timeout)
		return false
	}
	return true
}

// serveLogger is m.logger in the encoding --log-format chose: logfmt text,
// or one JSON object a line at the same levels.
func (m *Main) serveLogger(s *serveOptions) *slog.Logger {
	if s.logFormat != "json" {
		return m.logger(s.verbose)
	}
	opts := &slog.HandlerOptions{Level: slog.LevelError}
	if s.verbose {
		opts.Level = slog.LevelDebug
	}
	return slog.New(slog.NewJSONHandler(m.Stderr, opts))
}
