package client

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// recordingServer speaks the session protocol and records the text of every
// exec it receives. It answers each with a reply, except a text holding
// "FAIL", which it refuses with a syntax error at that word's position in
// the text it received, as a server that parsed it would.
type recordingServer struct {
	mu    sync.Mutex
	texts []string
}

func (s *recordingServer) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts...)
}

func (s *recordingServer) start(t *testing.T) string {
	t.Helper()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		write := func(m wire.ServerMessage) {
			b, _ := json.Marshal(m)
			_, _ = w.Write(append(b, '\n'))
			_ = rc.Flush()
		}
		w.WriteHeader(http.StatusOK)
		write(wire.ServerMessage{Type: wire.TypeWelcome, Version: wire.ProtocolVersion, Node: "rec"})
		lr := wire.NewLineReader(r.Body, wire.ClientMessageLimit)
		for {
			line, err := lr.Next()
			if err != nil {
				return
			}
			var m wire.ClientMessage
			if err := json.Unmarshal(line, &m); err != nil || m.Type != wire.TypeExec {
				continue
			}
			s.mu.Lock()
			s.texts = append(s.texts, m.Text)
			s.mu.Unlock()
			if i := strings.Index(m.Text, "FAIL"); i >= 0 {
				line := 1 + strings.Count(m.Text[:i], "\n")
				col := i - strings.LastIndexByte(m.Text[:i], '\n')
				write(wire.ServerMessage{Type: wire.TypeError, ID: m.ID, State: &wire.SessionState{},
					Error: &wire.Error{Line: line, Column: col, Offset: i, Code: "syntax", Message: "expected a statement, found FAIL"}})
				continue
			}
			res := wire.Result{Statement: m.Text, Message: "ok"}
			write(wire.ServerMessage{Type: wire.TypeReply, ID: m.ID, Result: wire.EncodeResult(res), State: &wire.SessionState{}})
		}
	})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: handler, Protocols: &p, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	testserve.Serve(t, ln, srv.Serve, srv.Close)
	return "http://" + ln.Addr().String()
}

// TestExecTextSendsTheSourceText holds the remote half of "parse once per
// side": the client cuts the caller's text once and sends each statement's
// own text, comments, case and line breaks as written, parsing none of them
// (the server alone parses and plans), and a position the server reports in
// the text it was sent is mapped to the statement's place in the caller's
// multi-line script.
func TestExecTextSendsTheSourceText(t *testing.T) {
	srv := &recordingServer{}
	url := srv.start(t)
	c, err := Dial(ctxT(t), Config{URLs: []string{url}, Logger: quietLogger()})
	require.NoError(t, err)
	defer c.Close()

	script := "-- setup\ncreate domain Prod /* the main one */;\n  USE prod; list\n    domains like 'p%';\nattach domain clock;\n"
	before := grammar.Parses()
	results, err := c.ExecText(ctxT(t), script)
	require.NoError(t, err)
	require.Equal(t, uint64(0), grammar.Parses()-before, "the client parsed a statement it only had to send")
	require.Len(t, results, 4)
	require.Equal(t, []string{
		"create domain Prod /* the main one */;",
		"USE prod;",
		"list\n    domains like 'p%';",
		"attach domain clock;",
	}, srv.received())

	// The third statement spans lines 3 and 4 of the script; the server
	// finds its error on the statement's second line.
	script = "USE a;\nSTOP;\n  START AT NOW\n    TIME FAIL 2;\nSTOP;"
	results, err = c.ExecText(ctxT(t), script)
	require.Len(t, results, 2, "the statements before the failure ran")
	var ge *follow.StatementError
	require.ErrorAs(t, err, &ge)
	require.ErrorIs(t, err, grammar.ErrSyntax)
	require.Equal(t, grammar.Position{Offset: strings.Index(script, "FAIL"), Line: 4, Column: 10}, ge.Pos)
	require.Equal(t, "START AT NOW\n    TIME FAIL 2;", srv.received()[6], "nothing after the failure was sent")
	require.Len(t, srv.received(), 7)

	// An error on the statement's first line is shifted by its column too.
	_, err = c.ExecText(ctxT(t), "USE a;   FAIL;")
	require.ErrorAs(t, err, &ge)
	require.Equal(t, grammar.Position{Offset: 9, Line: 1, Column: 10}, ge.Pos)

	// A rest the client cannot cut goes to the server, which says what is
	// wrong with it; nothing is parsed here for it either.
	before = grammar.Parses()
	_, err = c.ExecText(ctxT(t), "USE a;\n FAIL 'open")
	require.Equal(t, uint64(0), grammar.Parses()-before)
	require.ErrorAs(t, err, &ge)
	require.Equal(t, grammar.Position{Offset: 8, Line: 2, Column: 2}, ge.Pos)
	require.Equal(t, "FAIL 'open", srv.received()[len(srv.received())-1])
}

// TestServerPositionsPointIntoTheScript runs multi-line scripts on a real
// server, which alone parses what the client sends, and checks that its
// errors point at their character in the caller's script.
func TestServerPositionsPointIntoTheScript(t *testing.T) {
	e := newEnv(t, "")
	c := e.dial(Config{})
	exec(t, c, "CREATE DOMAIN a;")
	tests := []struct {
		name string
		text string
		at   string // the text at the error
		line int
		col  int
		want error
	}{
		{"a bad literal on a statement's second line", "USE a;\n-- go\n  START AT NOW\n    TIME RATE 0;", "0;", 4, 15, grammar.ErrInvalidRate},
		{"a syntax error after a comment", "USE a; /* one\n two */ LIST DOMAINS LIKE;", ";", 2, 26, grammar.ErrSyntax},
		{"an unterminated string", "USE a;\n\n   START AT '2030", "'2030", 3, 13, grammar.ErrSyntax},
		{"a refusal at the statement's start", "USE a;\n\t BEGIN; BEGIN;", "BEGIN;", 2, 10, session.ErrNestedTransaction},
		{"a name refused where it is written", "USE a;\n  DROP DOMAIN `a b`;", "`a b`", 2, 15, grammar.ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.ExecText(ctxT(t), tt.text)
			_, _ = c.ExecText(ctxT(t), "REVERT;")
			var ge *follow.StatementError
			require.ErrorAs(t, err, &ge)
			require.ErrorIs(t, err, tt.want)
			require.Equal(t, tt.line, ge.Pos.Line, "%v", err)
			require.Equal(t, tt.col, ge.Pos.Column, "%v", err)
			require.True(t, strings.HasPrefix(tt.text[ge.Pos.Offset:], tt.at), "the error's offset is at %q", tt.text[ge.Pos.Offset:])
		})
	}
}

// TestArchiveStatementErrorsAreLocal: an archive statement is the one the
// client parses, for its file; its syntax error points into the caller's
// text and the server is asked nothing.
func TestArchiveStatementErrorsAreLocal(t *testing.T) {
	srv := &recordingServer{}
	url := srv.start(t)
	c, err := Dial(ctxT(t), Config{URLs: []string{url}, Logger: quietLogger()})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ExecText(ctxT(t), "USE a;\n  BACKUP DOMAIN a TO ;")
	var ge *follow.StatementError
	require.ErrorAs(t, err, &ge)
	require.ErrorIs(t, err, grammar.ErrSyntax)
	require.Equal(t, grammar.Position{Offset: 28, Line: 2, Column: 22}, ge.Pos)
	require.Equal(t, []string{"USE a;"}, srv.received())
}

// TestOversizedStatementIsRefusedBeforeSending: a statement's own text
// travels, comments and all, so one too long for a message is refused here
// with the limit's sentinel, and the session stays usable.
func TestOversizedStatementIsRefusedBeforeSending(t *testing.T) {
	srv := &recordingServer{}
	url := srv.start(t)
	c, err := Dial(ctxT(t), Config{URLs: []string{url}, Logger: quietLogger()})
	require.NoError(t, err)
	defer c.Close()
	big := "USE a;\nLIST DOMAINS /* " + strings.Repeat("<", wire.ClientMessageLimit/4) + " */;"
	results, err := c.ExecText(ctxT(t), big)
	require.Len(t, results, 1)
	require.ErrorIs(t, err, wire.ErrMessageTooLarge)
	var ge *follow.StatementError
	require.ErrorAs(t, err, &ge)
	require.Equal(t, 2, ge.Pos.Line)
	require.Equal(t, []string{"USE a;"}, srv.received())
	exec(t, c, "STOP;")
}
