package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// serverBeforeRows speaks the session protocol as a server before streamed
// rows did: its welcome says nothing of rows, it refuses an exec with a
// field it does not know, and it answers LIST DOMAINS with the whole set of
// domains rows in the reply.
func serverBeforeRows(t *testing.T, domains int) string {
	t.Helper()
	set := &wire.ResultSet{Columns: []wire.Column{{Name: "name", Type: wire.KindText}}}
	for i := range domains {
		set.Rows = append(set.Rows, []wire.Value{wire.Text(fmt.Sprintf("d%03d", i))})
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		write := func(m wire.ServerMessage) {
			b, _ := json.Marshal(m)
			_, _ = w.Write(append(b, '\n'))
			_ = rc.Flush()
		}
		w.WriteHeader(http.StatusOK)
		write(wire.ServerMessage{Type: wire.TypeWelcome, Version: wire.ProtocolVersion, Node: "old"})
		lr := wire.NewLineReader(r.Body, wire.ClientMessageLimit)
		for {
			line, err := lr.Next()
			if err != nil {
				return
			}
			var m struct {
				Type string `json:"type"`
				ID   uint64 `json:"id"`
				Text string `json:"text,omitempty"`
			}
			if err := wire.UnmarshalStrict(line, &m); err != nil {
				write(wire.ServerMessage{Type: wire.TypeError, Error: &wire.Error{Line: 1, Column: 1, Code: "protocol", Message: err.Error()}})
				return
			}
			if m.Type != wire.TypeExec {
				continue
			}
			res := wire.Result{Statement: m.Text, Message: fmt.Sprintf("%d domains", domains), Set: set}
			write(wire.ServerMessage{Type: wire.TypeReply, ID: m.ID, Result: wire.EncodeResult(res), State: &wire.SessionState{}})
		}
	})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: handler, Protocols: &p, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	testserve.Serve(t, ln, srv.Serve, func() error { return srv.Shutdown(context.Background()) })
	return "http://" + ln.Addr().String()
}

// TestExecRowsAgainstAServerBeforeRows checks the compatibility story of
// streamed rows from the client's side: against a server whose welcome does
// not announce them, the client never asks (the old server would refuse
// the field and end the session), and ExecRows still hands the rows to the
// sink in chunks of wire.RowsChunkLimit from the whole reply.
func TestExecRowsAgainstAServerBeforeRows(t *testing.T) {
	url := serverBeforeRows(t, 600)
	c, err := Dial(ctxT(t), Config{URLs: []string{url}, Logger: quietLogger()})
	require.NoError(t, err)
	defer c.Close()
	var sizes []int
	r, err := c.ExecRows(ctxT(t), planner.ListDomains{}, func(chunk *wire.ResultSet) error {
		sizes = append(sizes, len(chunk.Rows))
		return nil
	})
	require.NoError(t, err, "the exec carried no field the old server refuses")
	require.Equal(t, []int{256, 256, 88}, sizes)
	require.Equal(t, "600 domains", r.Message)
	require.Empty(t, r.Set.Rows)
}
