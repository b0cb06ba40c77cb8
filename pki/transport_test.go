package pki

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
)

func TestHTTP2Only(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		cleartext                  bool
		http1, http2, unencrypted2 bool
	}{
		{"TLS", false, false, true, false},
		{"cleartext loopback", true, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := HTTP2Only(tc.cleartext)
			require.Equal(t, tc.http1, p.HTTP1(), "HTTP/1")
			require.Equal(t, tc.http2, p.HTTP2(), "HTTP/2 over TLS")
			require.Equal(t, tc.unencrypted2, p.UnencryptedHTTP2(), "unencrypted HTTP/2")
		})
	}
}

// TestTransportPolicy holds the peer transport's documented settings: the
// one protocol, and the idle and HTTP/2 health-check bounds.
func TestTransportPolicy(t *testing.T) {
	ca := testCA(t)
	tr := nodeMaterial(t, ca, "n1").Transport()
	defer tr.CloseIdleConnections()
	require.Equal(t, HTTP2Only(false), tr.Protocols)
	require.NotNil(t, tr.DialTLSContext, "the transport dials with its own bounded, h2-insisting dialer")
	require.Equal(t, 90*time.Second, tr.IdleConnTimeout)
	require.NotNil(t, tr.HTTP2)
	require.Equal(t, 15*time.Second, tr.HTTP2.SendPingTimeout)
	require.Equal(t, 5*time.Second, tr.HTTP2.PingTimeout)
}

// TestTransportRetriesAfterGoAwayWithAFreshBody holds the retry the policy
// relies on: a peer that reads a request and answers GOAWAY without
// processing it gets the request again, whole, on a new connection, and
// the caller sees only the reply of the retry. The first connection is
// answered by hand with x/net's framer; every later one by an http.Server.
func TestTransportRetriesAfterGoAwayWithAFreshBody(t *testing.T) {
	ca := testCA(t)
	n1 := nodeMaterial(t, ca, "n1")
	n2 := nodeMaterial(t, ca, "n2")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var handled atomic.Int32
	srv := &http.Server{
		TLSConfig:         n1.PeerServerConfig(),
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			handled.Add(1)
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			_, _ = io.WriteString(w, r.Proto+" "+string(b))
		}),
	}
	goAwaySent := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			goAwaySent <- err
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			goAwayOn(c, n1.PeerServerConfig(), goAwaySent)
		}()
		if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
		_ = c.Close() // ends goAwayOn's wait if the client has not closed it
	}()
	defer func() {
		require.NoError(t, srv.Close())
		_ = ln.Close() // in case nothing was accepted and ServeTLS never ran
		wg.Wait()
	}()

	tr := n2.Transport()
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := bytes.Repeat([]byte("the proposal "), 1000)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+ln.Addr().String()+"/v1/peer/propose", bytes.NewReader(body))
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, <-goAwaySent, "the first connection saw the request and answered GOAWAY")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "HTTP/2.0 "+string(body), string(got), "the retry carried the whole body")
	require.Equal(t, int32(1), handled.Load(), "only the retry was processed")
}

// goAwayOn completes raw's TLS and HTTP/2 preface as a server, waits for
// the first request's HEADERS and answers GOAWAY naming no stream as
// processed, sending the outcome on done; then it holds the connection
// until the client closes it (which it does once no stream is left on it)
// or the test does.
func goAwayOn(raw net.Conn, cfg *tls.Config, done chan<- error) {
	defer raw.Close()
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"h2"}
	conn := tls.Server(raw, cfg)
	err := func() error {
		if err := conn.Handshake(); err != nil {
			return err
		}
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(conn, preface); err != nil {
			return err
		}
		if string(preface) != http2.ClientPreface {
			return errors.New("no HTTP/2 client preface")
		}
		fr := http2.NewFramer(conn, conn)
		if err := fr.WriteSettings(); err != nil {
			return err
		}
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return err
			}
			if _, ok := f.(*http2.HeadersFrame); ok {
				return fr.WriteGoAway(0, http2.ErrCodeNo, nil)
			}
		}
	}()
	done <- err
	if err == nil {
		_, _ = io.Copy(io.Discard, conn)
	}
}
