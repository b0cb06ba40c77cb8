package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/wire"
)

// callKind says what the client must note about a reply.
type callKind uint8

const (
	callPlain callKind = iota
	callAttach
	callDetach
	callDomains
	callBackup // its reply follows the archive's pieces
)

// call is one request waiting for its answer.
type call struct {
	kind callKind
	done chan wire.ServerMessage // buffered 1
	// archive gathers a BACKUP's pieces; only the reader touches it, and
	// hands it over in the reply's Data.
	archive []byte
	// rows takes a streamed statement's row chunks (rows.go); nil for a
	// call that did not ask for them.
	rows RowSink
}

// conn is one session protocol stream: one server session.
type conn struct {
	c    *Client
	node string // the serving node, from the welcome
	rows bool   // the server streams rows on request, from the welcome
	// writeIDs: the server applies an exec's write once under its write
	// id, from the welcome.
	writeIDs bool
	// resume is the session's resume token; resumed is the session state
	// of the welcome, set when the session took up the transaction of a
	// lost one.
	resume  string
	resumed *wire.SessionState
	cancel  context.CancelFunc
	pw      *io.PipeWriter
	body    io.ReadCloser

	writeMu sync.Mutex

	mu      sync.Mutex
	calls   map[uint64]*call
	lostErr error
	lost    chan struct{} // closed when the stream ends

	// pingMu guards the pinger's timer, which close stops before it
	// reports the loss, so no ping timer outlives the stream.
	pingMu      sync.Mutex
	pingTimer   timesource.Timer
	pingStopped bool
}

// pingDivisor sets the ping interval to a third of the idle bound the
// server announces, so one lost or late ping does not close the session.
const pingDivisor = 3

// dial opens one stream to url and reads its welcome; a resume token
// asks the server for the open transaction of the lost session it names.
func (c *Client) dial(ctx context.Context, url, resume string) (*conn, error) {
	connCtx, cancel := context.WithCancel(c.ctx)
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(connCtx, http.MethodPost, strings.TrimRight(url, "/")+wire.SessionPath, pr)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	if c.cfg.ReadConsistency != "" {
		req.Header.Set(wire.ReadConsistencyHeader, string(c.cfg.ReadConsistency))
	}
	if c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	if resume != "" {
		req.Header.Set(wire.ResumeHeader, resume)
	}
	// The dial itself ends with ctx; the stream lives on with the client.
	stop := context.AfterFunc(ctx, cancel)
	resp, err := c.transport.RoundTrip(req)
	if err != nil {
		stop()
		cancel()
		_ = pw.Close()
		return nil, &ConnectError{URL: url, Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		stop()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		_ = resp.Body.Close()
		cancel()
		_ = pw.Close()
		err := fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			err = fmt.Errorf("%w: %v", ErrUnauthorized, err)
		}
		return nil, &ConnectError{URL: url, Err: err}
	}
	lr := wire.NewLineReader(resp.Body, wire.ServerMessageLimit)
	line, err := lr.Next()
	var welcome wire.ServerMessage
	if err == nil {
		err = json.Unmarshal(line, &welcome)
	}
	if !stop() {
		err = errors.Join(err, ctx.Err())
	}
	if err == nil && (welcome.Type != wire.TypeWelcome || welcome.Version != wire.ProtocolVersion) {
		err = fmt.Errorf("%w: the server speaks %q version %d; this client speaks version %d", ErrProtocolVersion, welcome.Type, welcome.Version, wire.ProtocolVersion)
	}
	if err != nil {
		_ = resp.Body.Close()
		cancel()
		_ = pw.Close()
		return nil, &ConnectError{URL: url, Err: err}
	}
	cn := &conn{c: c, node: welcome.Node, rows: welcome.Rows, writeIDs: welcome.WriteIDs, resume: welcome.Resume, resumed: welcome.State, cancel: cancel, pw: pw, body: resp.Body, calls: make(map[uint64]*call), lost: make(chan struct{})}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		cn.read(lr)
	}()
	if welcome.IdleTimeout > 0 {
		interval := max(time.Duration(welcome.IdleTimeout)/pingDivisor, 1)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			cn.ping(interval)
		}()
	}
	return cn, nil
}

// ping sends a ping message every interval until the stream ends, so a
// session that runs nothing stays inside the server's idle bound.
func (cn *conn) ping(interval time.Duration) {
	for {
		cn.pingMu.Lock()
		if cn.pingStopped {
			cn.pingMu.Unlock()
			return
		}
		t := cn.c.src.NewTimer(interval)
		cn.pingTimer = t
		cn.pingMu.Unlock()
		select {
		case <-t.C():
		case <-cn.lost:
			return
		}
		if err := cn.send(wire.ClientMessage{Type: wire.TypePing}); err != nil {
			return
		}
	}
}

// send writes one client message.
func (cn *conn) send(m wire.ClientMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	cn.writeMu.Lock()
	defer cn.writeMu.Unlock()
	if _, err := cn.pw.Write(b); err != nil {
		return fmt.Errorf("%w: %v", ErrConnectionLost, err)
	}
	return nil
}

// sendArchive sends b, the archive a request uploads, as archive messages
// of at most wire.ArchivePieceBytes each.
func (cn *conn) sendArchive(id uint64, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), wire.ArchivePieceBytes)
		if err := cn.send(wire.ClientMessage{Type: wire.TypeArchive, ID: id, Data: b[:n]}); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// register adds a call before its request is sent.
func (cn *conn) register(id uint64, kind callKind, rows RowSink) (*call, error) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.lostErr != nil {
		return nil, cn.lostErr
	}
	cl := &call{kind: kind, done: make(chan wire.ServerMessage, 1), rows: rows}
	cn.calls[id] = cl
	return cl, nil
}

func (cn *conn) forget(id uint64) {
	cn.mu.Lock()
	delete(cn.calls, id)
	cn.mu.Unlock()
}

// read dispatches server messages until the stream ends, then reports the
// loss.
func (cn *conn) read(lr *wire.LineReader) {
	var err error
	for {
		var line []byte
		line, err = lr.Next()
		if err != nil {
			break
		}
		var m wire.ServerMessage
		if err = json.Unmarshal(line, &m); err != nil {
			err = fmt.Errorf("%w: %v", wire.ErrProtocol, err)
			break
		}
		if err = cn.dispatch(m); err != nil {
			break
		}
	}
	cn.close(fmt.Errorf("%w: %w", ErrConnectionLost, err))
}

func (cn *conn) dispatch(m wire.ServerMessage) error {
	switch m.Type {
	case wire.TypeFrame:
		f, err := wire.DecodeFrame(m.Frame)
		if err != nil {
			return err
		}
		cn.c.frameArrived(cn, f)
		return nil
	case wire.TypeError:
		if m.ID == 0 && m.Error != nil {
			// A session error: the server closes the stream after it,
			// and its code says why (wire.ErrSessionIdle, ErrProtocol,
			// ...).
			return follow.DecodeError(m.Error)
		}
	case wire.TypeArchive:
		return cn.archivePiece(m)
	case wire.TypeRows:
		return cn.rowsChunk(m)
	case wire.TypeReply, wire.TypeNames:
	default:
		return fmt.Errorf("%w: unknown message type %q", wire.ErrProtocol, m.Type)
	}
	cn.mu.Lock()
	cl := cn.calls[m.ID]
	delete(cn.calls, m.ID)
	cn.mu.Unlock()
	if m.State != nil {
		cn.c.stateArrived(cn, *m.State)
	}
	if cl == nil {
		return nil // an abandoned request's answer
	}
	if m.Type == wire.TypeReply && m.Result != nil {
		switch cl.kind {
		case callAttach:
			if m.Result.Attachment != 0 {
				cn.c.attached(cn, m.Result)
			}
		case callDetach:
			cn.c.detached(cn, m.Result.Domain)
		}
	}
	if cl.kind == callBackup {
		m.Data = cl.archive
	}
	cl.done <- m
	return nil
}

// archivePiece adds a piece of a BACKUP's archive to its call. A piece for
// another kind of request, or one taking the archive over
// backup.MaxArchiveBytes, ends the stream.
func (cn *conn) archivePiece(m wire.ServerMessage) error {
	cn.mu.Lock()
	cl := cn.calls[m.ID]
	cn.mu.Unlock()
	if cl == nil {
		return nil // an abandoned request's
	}
	if cl.kind != callBackup {
		return fmt.Errorf("%w: archive bytes for request %d, which is no BACKUP", wire.ErrProtocol, m.ID)
	}
	if len(cl.archive)+len(m.Data) > backup.MaxArchiveBytes {
		return fmt.Errorf("%w: the node sent an archive over the %d-byte archive cap", wire.ErrProtocol, backup.MaxArchiveBytes)
	}
	cl.archive = append(cl.archive, m.Data...)
	return nil
}

// close ends the stream and fails every call waiting on it.
func (cn *conn) close(err error) {
	cn.mu.Lock()
	if cn.lostErr != nil {
		cn.mu.Unlock()
		return
	}
	cn.lostErr = err
	close(cn.lost)
	cn.calls = map[uint64]*call{}
	cn.mu.Unlock()
	cn.pingMu.Lock()
	cn.pingStopped = true
	if cn.pingTimer != nil {
		cn.pingTimer.Stop()
	}
	cn.pingMu.Unlock()
	cn.cancel()
	_ = cn.pw.CloseWithError(err)
	_ = cn.body.Close()
	cn.c.connLost(cn, err)
}

// sayClose tells the server the client ends the session (wire.TypeClose),
// so its open transaction is reverted rather than held for a reconnect. It
// waits at most grace for the message to go out, and not at all once the
// stream has ended: a stream that takes nothing more is closed all the
// same, which ends the send.
func (cn *conn) sayClose(grace time.Duration) {
	if cn.lostError() != nil {
		return
	}
	sent := make(chan struct{})
	cn.c.wg.Add(1)
	go func() {
		defer cn.c.wg.Done()
		defer close(sent)
		_ = cn.send(wire.ClientMessage{Type: wire.TypeClose})
	}()
	t := cn.c.src.NewTimer(grace)
	defer t.Stop()
	select {
	case <-sent:
	case <-cn.lost: // the stream ended first: there is no session to tell
	case <-t.C():
	}
}

// lostError returns why the stream ended, or nil.
func (cn *conn) lostError() error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.lostErr
}

// result decodes a reply's result.
func result(m wire.ServerMessage) (wire.Result, error) {
	if m.Result == nil {
		return wire.Result{}, fmt.Errorf("%w: reply without a result", wire.ErrProtocol)
	}
	return wire.DecodeResult(m.Result)
}
