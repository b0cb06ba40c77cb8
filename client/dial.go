package client

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/wire"
)

// Dial opens a session on the first URL that answers and returns the client.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if len(cfg.URLs) == 0 {
		return nil, fmt.Errorf("%w: no URL to connect to", ErrConfig)
	}
	var secure, plain bool
	for _, u := range cfg.URLs {
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" {
			return nil, fmt.Errorf("%w: URL %q: give https://HOST:PORT", ErrConfig, u)
		}
		switch pu.Scheme {
		case "https":
			secure = true
		case "http":
			plain = true
			host := pu.Host
			if pu.Port() == "" {
				host += ":80"
			}
			if err := wire.CheckLoopback(host); err != nil {
				return nil, fmt.Errorf("%w (got %q)", ErrInsecureURL, u)
			}
		default:
			return nil, fmt.Errorf("%w: URL %q: the scheme must be https or http", ErrConfig, u)
		}
	}
	if secure && plain {
		return nil, fmt.Errorf("%w: mix of http:// and https:// URLs", ErrConfig)
	}
	if _, err := wire.ParseReadConsistency(string(cfg.ReadConsistency)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	c := &Client{cfg: cfg, transport: cfg.Transport, src: cfg.TimeSource, logger: cfg.Logger,
		lane: make(chan struct{}, 1), follow: follow.NewFollow(ErrClosed), kick: make(chan struct{}, 1), followed: make(map[string]*followedClock)}
	if c.src == nil {
		c.src = timesource.System()
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.cfg.WriteRetry == 0 {
		c.cfg.WriteRetry = DefaultWriteRetry
	}
	if c.cfg.RequestTimeout <= 0 {
		c.cfg.RequestTimeout = DefaultRequestTimeout
	}
	if c.cfg.CancelGrace == 0 {
		c.cfg.CancelGrace = DefaultCancelGrace
	}
	if c.transport == nil {
		c.transport = newTransport(cfg.TLS, plain)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.lane <- struct{}{}
	if _, err := c.connect(ctx); err != nil {
		c.cancel()
		c.wg.Wait()
		return nil, err
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.supervise()
	}()
	return c, nil
}

// newTransport returns an HTTP/2-only transport under pki's client policy
// (pki.HTTP2Only): TLS with h2 forced on, or unencrypted HTTP/2 with prior
// knowledge for a loopback http:// URL.
func newTransport(tc *tls.Config, plain bool) *http.Transport {
	tr := &http.Transport{
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		Protocols:           pki.HTTP2Only(plain),
	}
	if !plain {
		if tc != nil {
			tc = tc.Clone()
			if tc.MinVersion < tls.VersionTLS12 {
				tc.MinVersion = tls.VersionTLS12
			}
		}
		tr.TLSClientConfig = tc
	}
	return tr
}
