package interconnect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// Client makes peer requests to other nodes' API addresses over HTTPS.
// Its transport must present this node's certificate and verify the
// peer's (pki.Material.Transport, which forces HTTP/2 on). Callers bound
// each call with ctx.
type Client struct {
	hc *http.Client
}

// NewClient returns a client over rt.
func NewClient(rt http.RoundTripper) *Client {
	return &Client{hc: &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// Progress delivers one report to the node at addr.
func (c *Client) Progress(ctx context.Context, addr string, rep clockrt.ProgressReport) (ProgressReply, error) {
	var reply ProgressReply
	err := c.do(ctx, http.MethodPost, addr, PathProgress, false, ProgressOf(rep), &reply)
	return reply, err
}

// Status probes the node at addr.
func (c *Client) Status(ctx context.Context, addr string) (Status, error) {
	var st Status
	err := c.do(ctx, http.MethodGet, addr, PathStatus, false, nil, &st)
	return st, err
}

// Installed waits until the node at addr has installed catalog revision
// rev, or its own bound or ctx ends the wait, and returns its reply.
func (c *Client) Installed(ctx context.Context, addr string, rev uint64) (InstalledReply, error) {
	var reply InstalledReply
	err := c.do(ctx, http.MethodPost, addr, PathInstalled, false, InstalledRequest{Revision: rev}, &reply)
	return reply, err
}

// Join asks the node at addr to add req's server as a voter.
func (c *Client) Join(ctx context.Context, addr string, forwarded bool, req JoinRequest) error {
	var out struct{}
	return c.do(ctx, http.MethodPost, addr, PathJoin, forwarded, req, &out)
}

// Remove asks the node at addr to remove the named node from the cluster.
func (c *Client) Remove(ctx context.Context, addr string, forwarded bool, name string) error {
	var out struct{}
	return c.do(ctx, http.MethodPost, addr, PathRemove, forwarded, RemoveRequest{Name: name}, &out)
}

// Propose commits cmd through the node at addr. Errors match catalog's
// sentinels as a local Propose's would; a transport failure after the
// request may have been sent is catalog.ErrOutcomeUnknown.
func (c *Client) Propose(ctx context.Context, addr string, forwarded bool, cmd lifecycle.Command) (lifecycle.Result, error) {
	data, err := lifecycle.EncodeCommand(cmd)
	if err != nil {
		return lifecycle.Result{}, err
	}
	var reply ProposeReply
	err = c.do(ctx, http.MethodPost, addr, PathPropose, forwarded, ProposeRequest{Command: data}, &reply)
	switch {
	case err != nil:
		var re *wire.RemoteError
		if !errors.As(err, &re) {
			return lifecycle.Result{}, fmt.Errorf("%w: forwarding to %s: %w", catalog.ErrOutcomeUnknown, addr, err)
		}
		return lifecycle.Result{}, err
	case reply.Error != nil:
		return lifecycle.Result{}, peerError(reply.Error)
	case reply.Result == nil:
		return lifecycle.Result{}, fmt.Errorf("%w: %w: the reply carries no result", catalog.ErrOutcomeUnknown, ErrBadRequest)
	}
	return *reply.Result, nil
}

// do sends one request and decodes the reply into out. A non-2xx reply
// returns its *wire.RemoteError (propose replies carry theirs in out).
func (c *Client) do(ctx context.Context, method, addr, path string, forwarded bool, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%w: encode: %v", ErrBadRequest, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "https://"+addr+path, rd)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrUnreachable, addr, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if forwarded {
		req.Header.Set(forwardedHeader, "1")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnreachable, addr, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return fmt.Errorf("%w: %s: read reply: %v", ErrUnreachable, addr, err)
	}
	if len(b) > MaxBodyBytes {
		return fmt.Errorf("%w: %s: reply is larger than %d bytes", ErrBadRequest, addr, MaxBodyBytes)
	}
	if resp.StatusCode/100 != 2 {
		if p, ok := out.(*ProposeReply); ok {
			if err := json.Unmarshal(b, p); err == nil && p.Error != nil {
				return nil
			}
		}
		return replyError(addr, resp.Status, b)
	}
	if err := decodeBytes(b, out); err != nil {
		return fmt.Errorf("%s: %w", addr, err)
	}
	return nil
}

// replyError is the error a failed reply with body b carries.
func replyError(addr, status string, b []byte) error {
	var er ErrorReply
	if err := json.Unmarshal(b, &er); err == nil && er.Error != nil {
		return peerError(er.Error)
	}
	return peerError(&wire.RemoteError{Code: CodeInternal, Message: fmt.Sprintf("%s answered %s", addr, status)})
}

// peerError says that re came from a peer; errors.As still finds re.
func peerError(re *wire.RemoteError) error { return fmt.Errorf("peer: %w", re) }
