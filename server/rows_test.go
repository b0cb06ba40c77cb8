package server

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// streamedMessageCap is the most bytes one message of a streamed LIST
// DOMAINS may take: a chunk of wire.RowsChunkLimit rows of these domains is
// about 16 KiB, and the whole table of 20,000 is over a megabyte.
const streamedMessageCap = 64 << 10

// TestListDomainsStreamsBoundedMessages holds the memory bound of a streamed
// LIST DOMAINS at 20,000 domains: a client that asks for rows gets them in
// rows messages of at most wire.RowsChunkLimit rows, each under
// streamedMessageCap, all of them in name order before the reply, whose set
// has the columns and no rows. A client that does not ask gets the whole
// table in one reply, as before streaming, and nothing else.
func TestListDomainsStreamsBoundedMessages(t *testing.T) {
	const domains = 20000
	url, _ := insecureEnv(t, Config{})
	s := openRaw(t, url)
	// An archive holds at most 9,999 domains: the catalog is restored in
	// parts, each adding its own domains.
	const part = 5000
	for i := range domains / part {
		archive := archiveOf(t, i*part, part)
		id := uint64(i + 1)
		s.upload(id, archive)
		s.send(wire.ClientMessage{Type: wire.TypeExec, ID: id, Text: "RESTORE CLUSTER FROM 'x';", Archive: &wire.Archive{Name: "x", Bytes: int64(len(archive))}})
		m := s.read()
		require.Equal(t, wire.TypeReply, m.Type, m.Error)
	}

	s.send(wire.ClientMessage{Type: wire.TypeExec, ID: 10, Text: "LIST DOMAINS;", Rows: true})
	largest, rows, chunks := 0, 0, 0
	for {
		line, err := s.lr.Next()
		require.NoError(t, err)
		largest = max(largest, len(line))
		var m wire.ServerMessage
		require.NoError(t, json.Unmarshal(line, &m))
		require.Equal(t, uint64(10), m.ID)
		if m.Type == wire.TypeReply {
			require.Equal(t, "20000 domains", m.Result.Message)
			require.Len(t, m.Result.Set.Columns, 4)
			require.Empty(t, m.Result.Set.Rows)
			break
		}
		require.Equal(t, wire.TypeRows, m.Type, m.Error)
		require.LessOrEqual(t, len(m.Set.Rows), wire.RowsChunkLimit)
		set, err := wire.DecodeSet(m.Set)
		require.NoError(t, err)
		for _, row := range set.Rows {
			require.Equal(t, fmt.Sprintf("d%05d", rows), row[0].Text(), "rows in name order, none lost")
			rows++
		}
		chunks++
	}
	require.Equal(t, domains, rows)
	require.Equal(t, (domains+wire.RowsChunkLimit-1)/wire.RowsChunkLimit, chunks)
	require.Less(t, largest, streamedMessageCap, "the largest message of the statement")

	s.send(wire.ClientMessage{Type: wire.TypeExec, ID: 11, Text: "LIST DOMAINS;"})
	line, err := s.lr.Next()
	require.NoError(t, err)
	var whole wire.ServerMessage
	require.NoError(t, json.Unmarshal(line, &whole))
	require.Equal(t, wire.TypeReply, whole.Type, "a client that did not ask gets no rows messages")
	require.Len(t, whole.Result.Set.Rows, domains)
	require.Greater(t, len(line), streamedMessageCap, "the cap is below what the whole table takes")
}

// archiveOf returns an archive of n never-started domains from d<from>.
func archiveOf(t testing.TB, from, n int) []byte {
	t.Helper()
	a := backup.Archive{Version: backup.Version, CapturedAt: int64(1767225600) * int64(time.Second), Scope: backup.ScopeCluster, Node: "elsewhere"}
	for i := from; i < from+n; i++ {
		a.Domains = append(a.Domains, backup.Domain{Record: lifecycle.Domain{
			Name: fmt.Sprintf("d%05d", i), Pace: lifecycle.Unpaced, Status: lifecycle.Stopped}})
	}
	b, err := backup.Encode(a)
	require.NoError(t, err)
	return b
}

// TestWelcomeSaysRowsStream checks the welcome announces streamed rows,
// which is what a client asks for them on.
func TestWelcomeSaysRowsStream(t *testing.T) {
	url, _ := insecureEnv(t, Config{})
	pr, pw := io.Pipe()
	defer pw.Close()
	hc := h2c()
	defer hc.CloseIdleConnections()
	resp, err := hc.Post(url+wire.SessionPath, "application/x-ndjson", pr)
	require.NoError(t, err)
	defer resp.Body.Close()
	line, err := wire.NewLineReader(resp.Body, wire.ServerMessageLimit).Next()
	require.NoError(t, err)
	var m wire.ServerMessage
	require.NoError(t, json.Unmarshal(line, &m))
	require.Equal(t, wire.TypeWelcome, m.Type)
	require.True(t, m.Rows)
}
