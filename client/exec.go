package client

import (
	"context"
	"errors"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// Exec runs one planned statement on the serving node. A failure is a
// *follow.StatementError at the plan's position, whose Kind matches the
// same sentinel a local session's would (or is a *lifecycle.Error), except
// that ErrClosed, the client's or the server session's, is returned
// unpositioned, as a local session returns it.
//
// The archive files of BACKUP, RESTORE and DESCRIBE BACKUP are on this
// machine: a BACKUP's archive comes back with its reply and is written
// here, and the archive a RESTORE or DESCRIBE BACKUP names is read here and
// sent up for the node to verify.
func (c *Client) Exec(ctx context.Context, p planner.Plan) (wire.Result, error) {
	if p == nil {
		return wire.Result{}, errors.New("client: nil plan")
	}
	kind := callPlain
	req := wire.ClientMessage{Type: wire.TypeExec, Text: p.String()}
	var upload []byte
	switch p.(type) {
	case planner.Attach:
		kind = callAttach
	case planner.Detach:
		kind = callDetach
	case planner.Backup, planner.Restore, planner.DescribeBackup:
		var err error
		if req.Archive, upload, err = c.prepareArchive(p); err != nil {
			return wire.Result{}, &follow.StatementError{Pos: p.Pos(), Msg: err.Error(), Kind: err}
		}
		if _, ok := p.(planner.Backup); ok {
			kind = callBackup
		}
	}
	m, err := c.request(ctx, req, kind, 0, upload)
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return wire.Result{}, err
		}
		return wire.Result{}, &follow.StatementError{Pos: p.Pos(), Msg: err.Error(), Kind: err}
	}
	if m.Type == wire.TypeError {
		ge := follow.DecodeError(m.Error)
		if kind == callDetach && errors.Is(ge, follow.ErrNotAttached) {
			if r, ok := c.dropPendingRestoration(p); ok {
				return r, nil
			}
		}
		if errors.Is(ge, ErrClosed) {
			// The server's session is closed: its error, like a local
			// one, is no statement's and keeps no position.
			return wire.Result{}, ge.Kind
		}
		// The server's position is in the canonical text it was sent; the
		// caller's statement starts at the plan's position.
		ge.Pos = p.Pos()
		return wire.Result{}, ge
	}
	if kind == callBackup {
		if err := c.saveArchive(req.Archive.Name, m); err != nil {
			return wire.Result{}, &follow.StatementError{Pos: p.Pos(), Msg: err.Error(), Kind: err}
		}
	}
	return result(m)
}

// ExecText plans every statement of text here and runs them in order,
// stopping at the first error, as session.Session.ExecText does
// (planner.RunScript): text that does not parse fails as a
// *follow.StatementError at the offending token.
func (c *Client) ExecText(ctx context.Context, text string) ([]wire.Result, error) {
	if c.ctx.Err() != nil {
		return nil, ErrClosed // text that would not parse included
	}
	rs, err := planner.RunScript(ctx, text, c.Exec)
	return rs, follow.ScriptFailure(err)
}

// dropPendingRestoration ends the following of the active domain's clock
// when a detach finds the session not holding it because its restoration is
// still pending: once the detach is answered no session holds the clock on
// the client's behalf, so the restoration must not happen later.
func (c *Client) dropPendingRestoration(p planner.Plan) (wire.Result, bool) {
	c.mu.Lock()
	domain := c.state.Active
	f := c.followed[domain]
	pending := f != nil && f.conn != c.conn
	if pending {
		delete(c.followed, domain)
	}
	c.mu.Unlock()
	if !pending {
		return wire.Result{}, false
	}
	c.follow.Released(domain)
	return wire.Result{Statement: p.String(), Domain: domain,
		Message: "stopped following the clock of domain '" + domain + "'; its restoration was still pending"}, true
}

// DomainNames returns the names of the serving node's domains, for
// completion.
func (c *Client) DomainNames(ctx context.Context) ([]string, error) {
	m, err := c.request(ctx, wire.ClientMessage{Type: wire.TypeDomains}, callDomains, 0, nil)
	if err != nil {
		return nil, err
	}
	return m.Names, nil
}
