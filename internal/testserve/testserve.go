// Package testserve runs a test's server on a loopback listener for the
// length of the test: the serve loop on a goroutine of its own, stopped
// and waited for when the test ends.
//
// It is for tests only and must never be imported by production code.
package testserve

import (
	"net"
	"net/http"
	"sync"
	"testing"
)

// Serve runs serve(ln) until the test ends; then it calls stop, fails the
// test if stop fails, and waits for serve to return. Cleanups run last
// registered first, so a cleanup registered before Serve (closing what the
// server serves) runs after the server has stopped.
func Serve(t testing.TB, ln net.Listener, serve func(net.Listener) error, stop func() error) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = serve(ln)
	}()
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("testserve: stop: %v", err)
		}
		wg.Wait()
	})
}

// H2C serves h over unencrypted HTTP/2 on a loopback port until the test
// ends and returns its URL.
func H2C(t testing.TB, h http.Handler) string {
	t.Helper()
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: h, Protocols: &protocols}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testserve: listen: %v", err)
	}
	Serve(t, ln, hs.Serve, hs.Close)
	return "http://" + ln.Addr().String()
}
