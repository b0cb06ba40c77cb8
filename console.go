package nspl

import (
	"context"
	"net"
	"sync"

	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/session"
)

// ConsoleOptions configures Engine.ServeConsole.
type ConsoleOptions struct {
	// Token is the bearer token a browser logs in with (and a remote
	// client authenticates with). Empty admits everyone who can reach the
	// loopback address, as an insecure nspl serve without a token does.
	Token string
}

// ServeConsole serves the engine's web console under /console/, with the
// session protocol beside it, over plain HTTP on ln until ctx ends or the
// engine closes; then it stops serving, ends the console's sessions and
// returns nil. ln must listen on a loopback address: there is no TLS, so
// ServeConsole refuses any other with server.ErrInsecureAddress.
func (e *Engine) ServeConsole(ctx context.Context, ln net.Listener, opts ConsoleOptions) error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	srv, err := server.New(server.Config{Node: e.node, Insecure: true, Token: opts.Token, Console: true, Logger: e.logger,
		Session: session.Options{FrameLimit: e.limit}})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		errc <- srv.Serve(ln)
	}()
	select {
	case <-ctx.Done():
	case <-e.done:
	case err = <-errc:
	}
	_ = srv.Close()
	wg.Wait()
	return err
}
