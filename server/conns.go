package server

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// connWatch counts the connections net/http closes before they serve a
// request: those whose TLS handshake failed or timed out, and those that
// completed it but sent no request before the header or idle timeout (or
// left). It holds one entry per open connection.
type connWatch struct {
	mu   sync.Mutex
	open map[net.Conn]*connInfo

	unservedHandshake atomic.Uint64
	unservedRequest   atomic.Uint64
}

type connInfo struct{ served atomic.Bool }

type connInfoKey struct{}

// context is http.Server.ConnContext: it registers c.
func (w *connWatch) context(ctx context.Context, c net.Conn) context.Context {
	ci := &connInfo{}
	w.mu.Lock()
	if w.open == nil {
		w.open = make(map[net.Conn]*connInfo)
	}
	w.open[c] = ci
	w.mu.Unlock()
	return context.WithValue(ctx, connInfoKey{}, ci)
}

// state is http.Server.ConnState: a connection's end is counted when it
// served nothing.
func (w *connWatch) state(c net.Conn, st http.ConnState) {
	if st != http.StateClosed && st != http.StateHijacked {
		return
	}
	w.mu.Lock()
	ci := w.open[c]
	delete(w.open, c)
	w.mu.Unlock()
	if ci == nil || ci.served.Load() {
		return
	}
	if tc, ok := c.(*tls.Conn); ok && !tc.ConnectionState().HandshakeComplete {
		w.unservedHandshake.Add(1)
		return
	}
	w.unservedRequest.Add(1)
}

// served marks the request's connection as one that served a request.
func served(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ci, ok := r.Context().Value(connInfoKey{}).(*connInfo); ok {
			ci.served.Store(true)
		}
		h.ServeHTTP(w, r)
	})
}
