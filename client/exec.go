package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// statement is one statement as the client sends it: the text the server
// parses and plans, what the client must do beside the request (the kind
// of call, the archive file of a BACKUP, RESTORE or DESCRIBE BACKUP) and
// how a position the server reports in that text maps to the caller's.
type statement struct {
	text string
	kind callKind
	// archive is the plan of an archive statement, whose file is on this
	// machine; nil for every other statement.
	archive planner.Plan
	// origin is where text starts in the caller's text; a position the
	// server reports in text maps through it (at).
	origin grammar.StatementSource
	// planned: text is a plan's canonical text, which the caller never
	// saw, so every position maps to the plan's own.
	planned bool
	// rows is a LIST DOMAINS, whose rows a row sink takes.
	rows bool
	// write: the statement makes one catalog write, which the server
	// applies once under a write id (execWrite).
	write bool
}

// at maps pos, a position in st.text, to the caller's text.
func (st statement) at(pos grammar.Position) grammar.Position {
	if st.planned {
		return st.origin.Start
	}
	return st.origin.Locate(pos)
}

// fromSource is the statement of src, cut from the caller's text. It is
// told by its keywords (grammar.StatementSource.Keywords), not parsed: the
// server alone parses and plans what the client sends. The one exception
// is an archive statement, which the client parses for its file, since the
// node never opens a path a client names; a syntax error in one is
// reported here, at its place in the caller's text.
func fromSource(src grammar.StatementSource) (statement, error) {
	st := statement{text: src.Text, kind: callPlain, origin: src}
	first, second := src.Keywords()
	st.write = oneWriteKeyword(first, second)
	switch {
	case first == "ATTACH":
		st.kind = callAttach
	case first == "DETACH":
		st.kind = callDetach
	case first == "LIST" && second == "DOMAINS":
		st.rows = true
	case first == "BACKUP", first == "RESTORE", first == "DESCRIBE" && second == "BACKUP":
		stmt, err := grammar.ParseStatement(src.Text)
		var p planner.Plan
		if err == nil {
			p, err = planner.PlanStatement(stmt)
		}
		if err != nil {
			var ge *grammar.Error
			if errors.As(err, &ge) {
				located := &grammar.Error{Pos: src.Locate(ge.Pos), Msg: ge.Msg, Kind: ge.Kind}
				return statement{}, follow.Positioned(located.Pos, located)
			}
			return statement{}, &follow.StatementError{Pos: src.Start, Msg: err.Error(), Kind: err}
		}
		st.archive = p
		if first == "BACKUP" {
			st.kind = callBackup
		}
	}
	return st, nil
}

// fromPlan is the statement of a plan a Go caller built: the server is
// sent its canonical text, and a position it reports is the plan's own.
func fromPlan(p planner.Plan) statement {
	st := statement{text: p.String(), kind: callPlain, origin: grammar.StatementSource{Start: p.Pos()}, planned: true}
	switch p.(type) {
	case planner.Attach:
		st.kind = callAttach
	case planner.Detach:
		st.kind = callDetach
	case planner.ListDomains:
		st.rows = true
	case planner.Backup:
		st.archive, st.kind = p, callBackup
	case planner.Restore, planner.DescribeBackup:
		st.archive = p
	case planner.CreateDomain, planner.DropDomain, planner.AlterPlacement, planner.Start, planner.Stop:
		st.write = true
	}
	return st
}

// Exec runs one planned statement on the serving node, sending its
// canonical text. A failure is a *follow.StatementError at the plan's position,
// whose Kind unwraps to the same sentinel a local session's would (or is a
// *lifecycle.Error), except that ErrClosed, the client's or the server
// session's, is returned unpositioned, as a local session returns it.
//
// The archive files of BACKUP, RESTORE and DESCRIBE BACKUP are on this
// machine: a BACKUP's archive comes back with its reply and is written
// here, and the archive a RESTORE or DESCRIBE BACKUP names is read here and
// sent up for the node to verify.
func (c *Client) Exec(ctx context.Context, p planner.Plan) (wire.Result, error) {
	if p == nil {
		return wire.Result{}, errors.New("client: nil plan")
	}
	return c.exec(ctx, fromPlan(p))
}

// ExecText runs every statement of text on the serving node in order,
// stopping at the first error, as session.Session.ExecText does. The text
// is split here once (grammar.Split) and each statement's own source text
// is sent: the server alone parses and plans it, and a position it reports
// (a syntax error, a bad literal, a refusal at the statement's start) is
// mapped back to the statement's place in text. Statements before a
// failure run; nothing after it does. A rest the split could not cut (an
// unterminated string or comment) is sent too, for the server to say what
// is wrong with it, as a local session's parse would.
func (c *Client) ExecText(ctx context.Context, text string) ([]wire.Result, error) {
	return c.execText(ctx, text, nil)
}

// execText is ExecText with the rows of each LIST DOMAINS handed to sink,
// when sink is set.
func (c *Client) execText(ctx context.Context, text string, sink RowSink) ([]wire.Result, error) {
	if c.ctx.Err() != nil {
		return nil, ErrClosed // text that would not parse included
	}
	sc := grammar.Split(text)
	results := make([]wire.Result, 0, len(sc.Statements))
	for _, src := range sc.Statements {
		r, err := c.execSource(ctx, src, sink)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	if sc.Err != nil {
		// The rest does not lex, so the server refuses it without running
		// anything; its error is the one a local parse reports there.
		if _, err := c.execSource(ctx, sc.Rest, sink); err != nil {
			return results, err
		}
		return results, sc.Err
	}
	return results, nil
}

func (c *Client) execSource(ctx context.Context, src grammar.StatementSource, sink RowSink) (wire.Result, error) {
	st, err := fromSource(src)
	if err != nil {
		return wire.Result{}, err
	}
	if sink != nil && st.rows {
		return c.execRows(ctx, st, sink)
	}
	return c.exec(ctx, st)
}

// exec runs one statement on the serving node.
func (c *Client) exec(ctx context.Context, st statement) (wire.Result, error) {
	req := wire.ClientMessage{Type: wire.TypeExec, Text: st.text}
	if err := checkMessageSize(req); err != nil {
		return wire.Result{}, &follow.StatementError{Pos: st.at(grammar.Position{Line: 1, Column: 1}), Msg: err.Error(), Kind: err}
	}
	var upload []byte
	if st.archive != nil {
		var err error
		if req.Archive, upload, err = c.prepareArchive(st.archive); err != nil {
			return wire.Result{}, &follow.StatementError{Pos: st.at(grammar.Position{Line: 1, Column: 1}), Msg: err.Error(), Kind: err}
		}
	}
	var m wire.ServerMessage
	var err error
	if c.writeOnce(st) {
		req.Write = newWriteID()
		m, err = c.execWrite(ctx, req, st.kind)
	} else {
		m, err = c.request(ctx, req, st.kind, 0, upload)
	}
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return wire.Result{}, err
		}
		return wire.Result{}, &follow.StatementError{Pos: st.at(grammar.Position{Line: 1, Column: 1}), Msg: err.Error(), Kind: err}
	}
	if m.Type == wire.TypeError {
		ge := follow.DecodeError(m.Error)
		if st.kind == callDetach && errors.Is(ge, follow.ErrNotAttached) {
			if r, ok := c.dropPendingRestoration(); ok {
				return r, nil
			}
		}
		if errors.Is(ge, ErrClosed) {
			// The server's session is closed: its error, like a local
			// one, is no statement's and keeps no position.
			return wire.Result{}, ge.Kind
		}
		// The server's position is in the text it was sent.
		ge.Pos = st.at(ge.Pos)
		return wire.Result{}, ge
	}
	if st.kind == callBackup {
		if err := c.saveArchive(req.Archive.Name, m); err != nil {
			return wire.Result{}, &follow.StatementError{Pos: st.at(grammar.Position{Line: 1, Column: 1}), Msg: err.Error(), Kind: err}
		}
	}
	return result(m)
}

// writeOnce reports whether st is sent under a write id: a statement that
// makes one catalog write, outside a transaction (inside one, START, STOP
// and ALTER are queued in the server's session, which a lost connection
// ends, so sending one again elsewhere would apply it alone).
func (c *Client) writeOnce(st statement) bool {
	if !st.write || st.archive != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.state.InTx
}

// checkMessageSize refuses an exec the server would refuse as too large
// (wire.ClientMessageLimit, the line break included), before it is sent: a
// statement's own text travels, comments and all, so a statement can be
// longer than the canonical text of its plan.
func checkMessageSize(m wire.ClientMessage) error {
	if len(m.Text) < wire.ClientMessageLimit/8 {
		return nil // JSON escapes a byte into at most six
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b)+1 > wire.ClientMessageLimit {
		return fmt.Errorf("%w: the statement is %d bytes as sent, over the %d-byte limit of a message; shorten it (comments inside a statement travel with it)",
			wire.ErrMessageTooLarge, len(b)+1, wire.ClientMessageLimit)
	}
	return nil
}

// dropPendingRestoration ends the following of the active domain's clock
// when a detach finds the session not holding it because its restoration is
// still pending: once the detach is answered no session holds the clock on
// the client's behalf, so the restoration must not happen later.
func (c *Client) dropPendingRestoration() (wire.Result, bool) {
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
	return wire.Result{Statement: planner.Detach{}.String(), Domain: domain,
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
