package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/nspl-dev/nspl"
	"github.com/nspl-dev/nspl/client"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/session"
)

// remoteOptions are the flags that point the shell, the script runner and
// nspl clock at a node instead of an embedded one.
type remoteOptions struct {
	connect   string // comma-separated URLs
	tokenFile string
	ca        string
	cert      string
	key       string
	overwrite bool   // BACKUP may replace a file that is not an archive
	read      string // --read-consistency: local or linearizable
	profile   string // --profile: the config file's profile to fill the rest from

	connectFrom string // where connect came from, for errors: --connect, NSPL_CONNECT or a profile
}

// addRemoteFlags registers --connect and its credentials. Values given
// before a subcommand are the defaults of its own flag set, so they survive
// it.
func addRemoteFlags(fs *flag.FlagSet, o *remoteOptions) {
	fs.StringVar(&o.connect, "connect", o.connect, "run against the node at `URL` (https://HOST:PORT; several, comma-separated, are tried in order)")
	fs.StringVar(&o.tokenFile, "token-file", o.tokenFile, "authenticate with the bearer token in `FILE`")
	fs.StringVar(&o.ca, "ca", o.ca, "trust the cluster CA certificate in `FILE`")
	fs.StringVar(&o.cert, "cert", o.cert, "present the client certificate in `FILE` (with --key)")
	fs.StringVar(&o.key, "key", o.key, "the client certificate's private key `FILE`")
	fs.StringVar(&o.profile, "profile", o.profile, "take the connection settings flags do not give from profile `NAME` of the config file")
	fs.BoolVar(&o.overwrite, "overwrite", o.overwrite, "let BACKUP replace an existing file that is not an nspl archive")
	fs.StringVar(&o.read, "read-consistency", o.read, "with --connect, what reads promise: `LEVEL` local (the node's own state, the default) or linearizable (confirmed through the leader)")
}

// sessionBackend is what the shell, the script runner and nspl clock run
// against: a local session on an embedded node, or a remote client.
type sessionBackend interface {
	shellSession
	// DomainNames lists domain names for completion.
	DomainNames(ctx context.Context) ([]string, error)
}

var (
	_ sessionBackend = (*nspl.Session)(nil)
	_ sessionBackend = (*client.Client)(nil)
	_ rowStreamer    = (*nspl.Session)(nil)
	_ rowStreamer    = (*client.Client)(nil)
)

// openSession opens what statements run against: a remote client with
// --connect, otherwise a session on an embedded node. It returns the time
// source for nspl clock --timeout and the function that closes everything.
func (m *Main) openSession(ctx context.Context, opts options) (sessionBackend, timesource.Source, func(), error) {
	if opts.remote.connect != "" {
		if opts.dataDir != "" {
			from := opts.remote.connectFrom
			if from == "" {
				from = "--connect"
			}
			return nil, nil, nil, usageErrorf("--data-dir and %s exclude each other: the node keeps its own catalog", from)
		}
		cfg, err := m.clientConfig(opts.remote, opts.verbose)
		if err != nil {
			return nil, nil, nil, err
		}
		c, err := client.Dial(ctx, cfg)
		if err != nil {
			if errors.Is(err, client.ErrConfig) || errors.Is(err, client.ErrInsecureURL) {
				return nil, nil, nil, usageErrorf("--connect: %v", err)
			}
			return nil, nil, nil, ioError(err)
		}
		return c, timesource.System(), func() { _ = c.Close() }, nil
	}
	var src timesource.Source = timesource.System()
	if opts.virtualTime {
		src = timesource.NewVirtual(opts.virtualAt)
	}
	eng, err := nspl.Open(ctx, nspl.Options{Logger: m.logger(opts.verbose), DataDir: opts.dataDir, TimeSource: src, OverwriteArchives: opts.remote.overwrite})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, nil, &RunError{Kind: ErrStatementFailed, Err: ErrInterrupted}
		}
		return nil, nil, nil, ioError(fmt.Errorf("open the node: %w", err))
	}
	sess, err := eng.NewSession()
	if err != nil {
		_ = eng.Close()
		return nil, nil, nil, ioError(fmt.Errorf("open a session: %w", err))
	}
	stopConsole := func() {}
	if opts.console != "" {
		if stopConsole, err = m.serveConsole(eng, opts.console); err != nil {
			_ = sess.Close()
			_ = eng.Close()
			return nil, nil, nil, err
		}
	}
	return sess, src, func() {
		stopConsole()
		_ = sess.Close()
		_ = eng.Close()
	}, nil
}

// serveConsole serves eng's web console on the loopback address addr
// until the returned stop, behind a token made for this run, and prints
// the login link (the token in its fragment, which the browser keeps from
// the server's logs) on stderr.
func (m *Main) serveConsole(eng *nspl.Engine, addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, ioError(fmt.Errorf("--console: listen on %s: %w", addr, err))
	}
	var raw [24]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails
	token := base64.RawURLEncoding.EncodeToString(raw[:])
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // owned: ends at stop
		defer close(done)
		if err := eng.ServeConsole(ctx, ln, nspl.ConsoleOptions{Token: token}); err != nil {
			m.notice("nspl: the console stopped: " + err.Error())
		}
	}()
	fmt.Fprintf(m.Stderr, "nspl: console at http://%s/console/login#token=%s (loopback only, for as long as this shell runs)\n", ln.Addr(), token)
	return func() {
		cancel()
		<-done
	}, nil
}

// clientConfig builds the remote client's configuration from the flags.
func (m *Main) clientConfig(o remoteOptions, verbose bool) (client.Config, error) {
	cfg := client.Config{
		URLs:   strings.Split(o.connect, ","),
		Logger: m.logger(verbose),
		Notify: func(n client.Notice) { m.notice("nspl: " + n.String()) },

		OverwriteArchives: o.overwrite,
		ReadConsistency:   session.ReadConsistency(o.read),
		// Ctrl-C gives the prompt back at once, even from a node that
		// does not answer: the cancel goes to it in the background.
		CancelGrace: client.AbandonCancelled,
	}
	for i, u := range cfg.URLs {
		cfg.URLs[i] = strings.TrimSpace(u)
	}
	if o.tokenFile != "" {
		b, err := readFileLimited(o.tokenFile, maxTokenBytes)
		if err != nil {
			return cfg, ioError(fmt.Errorf("read the token: %w", err))
		}
		cfg.Token = strings.TrimSpace(string(b))
		if cfg.Token == "" {
			return cfg, usageErrorf("--token-file %q is empty; write the token the server was given", o.tokenFile)
		}
	}
	tc, err := clientTLS(o)
	if err != nil {
		return cfg, err
	}
	cfg.TLS = tc
	return cfg, nil
}

// clientTLS is the TLS configuration of --ca, --cert and --key: with a
// certificate it presents it and requires a node certificate of the CA;
// with only --ca it trusts the CA (token authentication).
func clientTLS(o remoteOptions) (*tls.Config, error) {
	if (o.cert == "") != (o.key == "") {
		return nil, usageErrorf("--cert and --key go together")
	}
	if o.cert != "" {
		if o.ca == "" {
			return nil, usageErrorf("--cert needs --ca, the cluster CA certificate")
		}
		mat, err := pki.LoadFiles(o.ca, o.cert, o.key)
		if err != nil {
			return nil, ioError(err)
		}
		return mat.ClientConfig("", ""), nil
	}
	if o.ca == "" {
		return nil, nil
	}
	pool, err := pki.LoadCAPool(o.ca)
	if err != nil {
		return nil, ioError(err)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// adminCommand is nspl leave or nspl remove NODE.
type adminCommand struct {
	name  string // "leave" or "remove"
	node  string // the node remove removes
	force bool   // remove --force: a node that is still live too
}

// parseAdminArgs parses
//
//	nspl --connect URL [credentials] leave
//	nspl --connect URL [credentials] remove [--force] NODE
//
// The connection flags may also follow the subcommand.
func parseAdminArgs(o options, name string, args []string) (options, error) {
	fs := flag.NewFlagSet("nspl "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addRemoteFlags(fs, &o.remote)
	cmd := &adminCommand{name: name}
	if name == "remove" {
		fs.BoolVar(&cmd.force, "force", false, "remove the node even though it is still live")
	}
	if err := fs.Parse(args); err != nil {
		return o, flagParseError(fs, name, err)
	}
	rest := fs.Args()
	switch {
	case name == "remove" && len(rest) == 1:
		if err := pki.ValidName(rest[0]); err != nil {
			return o, usageErrorf("remove: %v", err)
		}
		cmd.node = rest[0]
	case name == "remove":
		return o, usageErrorf("remove: give exactly one node name")
	case len(rest) > 0:
		return o, usageErrorf("%s: unexpected argument %q", name, rest[0])
	}
	o.admin = cmd
	return o, nil
}

// runAdmin sends leave or remove to the node at --connect.
func (m *Main) runAdmin(ctx context.Context, opts options) error {
	cfg, err := m.clientConfig(opts.remote, opts.verbose)
	if err != nil {
		return err
	}
	var msg string
	if opts.admin.name == "leave" {
		msg, err = client.Leave(ctx, cfg)
	} else {
		msg, err = client.Remove(ctx, cfg, opts.admin.node, opts.admin.force)
	}
	switch {
	case errors.Is(err, client.ErrConfig), errors.Is(err, client.ErrInsecureURL):
		return usageErrorf("%s: %v", opts.admin.name, err)
	case errors.As(err, new(*client.ConnectError)):
		return ioError(err)
	case err != nil:
		fmt.Fprintf(m.Stderr, "nspl %s: error: %s\n", opts.admin.name, termSafe(err.Error()))
		return &RunError{Kind: ErrStatementFailed, Err: err, Reported: true}
	}
	return writeLine(m.Stdout, termSafe(msg)) // the node's answer
}
