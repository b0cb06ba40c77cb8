package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/nspl-dev/nspl/internal/lsp"
)

// parseLSPArgs parses the flags of nspl lsp:
//
//	nspl [connection flags] lsp [connection flags]
//
// The connection flags are the shell's (--connect, --ca, --cert, --key,
// --token-file, --profile), before or after the subcommand's name.
func parseLSPArgs(o options, args []string) (options, error) {
	fs := flag.NewFlagSet("nspl lsp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The shell's connection flags, without those only statements use
	// (--overwrite, --read-consistency).
	remote := flag.NewFlagSet("", flag.ContinueOnError)
	addRemoteFlags(remote, &o.remote)
	for _, name := range []string{"connect", "token-file", "ca", "cert", "key", "profile"} {
		f := remote.Lookup(name)
		fs.Var(f.Value, f.Name, f.Usage)
	}
	fs.BoolVar(&o.verbose, "verbose", o.verbose, "log the client's internals to stderr")
	if err := parseSubcommand(fs, "lsp", args); err != nil {
		return o, err
	}
	o.lsp = true
	return o, nil
}

// runLSP serves the Language Server Protocol on stdin and stdout until the
// editor sends exit. With --connect, completion also offers the domain
// names of that node, whose session is opened at the first completion that
// needs them (and again after a failure).
func (m *Main) runLSP(ctx context.Context, opts options) error {
	if len(opts.sources) > 0 || opts.dataDir != "" {
		return usageErrorf("lsp: serves an editor alone; drop -f, -c and --data-dir (--connect names a node for domain names)")
	}
	var (
		mu    sync.Mutex
		sess  sessionBackend
		close func()
	)
	defer func() {
		if close != nil {
			close()
		}
	}()
	lopts := lsp.Options{Help: helpText, Log: m.Stderr}
	if opts.remote.connect != "" {
		lopts.Domains = func(ctx context.Context) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			if sess == nil {
				s, _, c, err := m.openSession(ctx, opts)
				if err != nil {
					return nil, err
				}
				sess, close = s, c
			}
			names, err := sess.DomainNames(ctx)
			if err != nil {
				close()
				sess, close = nil, nil
			}
			return names, err
		}
	}
	err := lsp.Serve(ctx, m.Stdin, m.Stdout, lopts)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, lsp.ErrNoShutdown), errors.Is(err, lsp.ErrFraming):
		return &RunError{Kind: ErrStatementFailed, Err: fmt.Errorf("lsp: %w", err), Code: ExitFailed}
	case ctx.Err() != nil:
		return &RunError{Kind: ErrStatementFailed, Err: ErrInterrupted}
	}
	return ioError(err)
}
