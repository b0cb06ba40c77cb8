package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/nspl-dev/nspl/wire"
)

// Leave asks the node at the first URL of cfg to leave its cluster and
// returns the node's message.
func Leave(ctx context.Context, cfg Config) (string, error) {
	return admin(ctx, cfg, wire.LeavePath, nil)
}

// Remove asks the node at the first URL of cfg to remove node name from the
// cluster and returns the node's message. A node that is still live is
// refused unless force is set.
func Remove(ctx context.Context, cfg Config, name string, force bool) (string, error) {
	body, err := json.Marshal(wire.RemoveRequest{Node: name, Force: force})
	if err != nil {
		return "", err
	}
	return admin(ctx, cfg, wire.RemovePath, body)
}

func admin(ctx context.Context, cfg Config, path string, body []byte) (string, error) {
	if len(cfg.URLs) == 0 {
		return "", fmt.Errorf("%w: no URL to connect to", ErrConfig)
	}
	u := cfg.URLs[0]
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" || (pu.Scheme != "https" && pu.Scheme != "http") {
		return "", fmt.Errorf("%w: URL %q: give https://HOST:PORT", ErrConfig, u)
	}
	if pu.Scheme == "http" {
		host := pu.Host
		if pu.Port() == "" {
			host += ":80"
		}
		if err := wire.CheckLoopback(host); err != nil {
			return "", fmt.Errorf("%w (got %q)", ErrInsecureURL, u)
		}
	}
	tr := cfg.Transport
	if tr == nil {
		t := newTransport(cfg.TLS, pu.Scheme == "http")
		defer t.CloseIdleConnections()
		tr = t
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(u, "/")+path, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrConfig, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.Token)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", &ConnectError{URL: u, Err: err}
	}
	defer resp.Body.Close()
	var rep wire.AdminReply
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return "", &ConnectError{URL: u, Err: fmt.Errorf("%w: %s", ErrUnauthorized, strings.TrimSpace(string(b)))}
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return "", fmt.Errorf("%w: %s: %s", wire.ErrProtocol, resp.Status, strings.TrimSpace(string(b)))
	}
	if rep.Error != "" {
		return "", errors.New(rep.Error)
	}
	return rep.Message, nil
}
