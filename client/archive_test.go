package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// TestArchivesAreTheClientsFiles runs BACKUP, RESTORE and DESCRIBE BACKUP
// over the wire: the archive is written and read here, several protocol
// pieces long, and the node's verification and refusals come back typed.
func TestArchivesAreTheClientsFiles(t *testing.T) {
	e := newEnv(t, "")
	c := e.dial(Config{})
	dir := t.TempDir()

	// A local archive of many domains, restored through the node.
	a := backup.Archive{Version: backup.Version, CapturedAt: t0, Scope: backup.ScopeCluster, Node: "elsewhere"}
	for i := range 1500 {
		a.Domains = append(a.Domains, backup.Domain{Record: lifecycle.Domain{Name: fmt.Sprintf("d%04d", i), Pace: lifecycle.Unpaced, Status: lifecycle.Stopped}})
	}
	many := filepath.Join(dir, "many.nsplbak")
	_, size, err := backup.Write(many, a, backup.WriteOptions{})
	require.NoError(t, err)
	res := exec(t, c, "DESCRIBE BACKUP '"+many+"';")
	require.Len(t, res[0].Set.Rows, 1500)
	res = exec(t, c, "RESTORE CLUSTER FROM '"+many+"';")
	require.Contains(t, res[0].Message, "from '"+many+"'")
	require.Len(t, e.node.Domains(), 1500)

	// BACKUP brings the archive back and writes it here: 0600, complete.
	out := filepath.Join(dir, "out.nsplbak")
	res = exec(t, c, "BACKUP CLUSTER TO '"+out+"';")
	require.Contains(t, res[0].Message, "backed up cluster (1500 domains) to '"+out+"'")
	fi, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.Greater(t, fi.Size(), size/2)
	_, got, err := backup.Read(out)
	require.NoError(t, err)
	require.Len(t, got.Domains, 1500)
	require.Equal(t, "n1", got.Node)
	exec(t, c, "BACKUP CLUSTER TO '"+out+"';") // an older archive is replaced

	// A file that is not an archive is not replaced unless told to.
	notes := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("precious"), 0o644))
	_, err = c.ExecText(ctxT(t), "BACKUP CLUSTER TO '"+notes+"';")
	require.ErrorIs(t, err, backup.ErrNotArchive)
	b, err := os.ReadFile(notes)
	require.NoError(t, err)
	require.Equal(t, "precious", string(b))
	forced := e.dial(Config{OverwriteArchives: true})
	exec(t, forced, "BACKUP CLUSTER TO '"+notes+"';")
	_, _, err = backup.Read(notes)
	require.NoError(t, err)

	// Refusals: local ones before anything is sent, the node's verification
	// typed as a local session's would be.
	corrupt := filepath.Join(dir, "corrupt.nsplbak")
	b, err = os.ReadFile(out)
	require.NoError(t, err)
	b[600] ^= 0xff
	require.NoError(t, os.WriteFile(corrupt, b, 0o600))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, mkfifo(fifo))
	for _, tc := range []struct {
		stmt string
		err  error
	}{
		{"DESCRIBE BACKUP '" + corrupt + "';", backup.ErrCorrupt},
		{"RESTORE DOMAIN d0001 AS copy FROM '" + corrupt + "';", backup.ErrCorrupt},
		{"DESCRIBE BACKUP '" + filepath.Join(dir, "missing") + "';", backup.ErrPath},
		{"DESCRIBE BACKUP '/dev/zero';", backup.ErrPath},
		{"RESTORE CLUSTER FROM '" + fifo + "';", backup.ErrPath},
		{"BACKUP CLUSTER TO '" + dir + "';", backup.ErrPath},
		{"BACKUP CLUSTER TO '" + fifo + "';", backup.ErrNotArchive},
		{"RESTORE CLUSTER FROM '" + many + "';", lifecycle.ErrDomainExists},
	} {
		_, err := c.ExecText(ctxT(t), tc.stmt)
		require.ErrorIs(t, err, tc.err, tc.stmt)
	}
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// answering is a session protocol server that answers each exec with what
// answer returns.
type answering func(m wire.ClientMessage) []wire.ServerMessage

func (a answering) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	write := func(m wire.ServerMessage) {
		_ = enc.Encode(m)
		_ = rc.Flush()
	}
	write(wire.ServerMessage{Type: wire.TypeWelcome, Version: wire.ProtocolVersion, Node: "fake"})
	lr := wire.NewLineReader(r.Body, wire.ClientMessageLimit)
	for {
		l, err := lr.Next()
		if err != nil {
			return
		}
		var m wire.ClientMessage
		if json.Unmarshal(l, &m) != nil || m.Type != wire.TypeExec {
			continue
		}
		for _, out := range a(m) {
			write(out)
		}
	}
}

// TestMisbehavingNodeArchives checks the client writes nothing a node sent
// that is not a whole, verified archive, and ends a stream that sends
// archive bytes for a statement that is no BACKUP.
func TestMisbehavingNodeArchives(t *testing.T) {
	good, err := backup.Encode(backup.Archive{Version: backup.Version, CapturedAt: t0, Scope: backup.ScopeCluster, Node: "fake"})
	require.NoError(t, err)
	reply := func(m wire.ClientMessage, data []byte, bytes int64) []wire.ServerMessage {
		return []wire.ServerMessage{
			{Type: wire.TypeArchive, ID: m.ID, Data: data},
			{Type: wire.TypeReply, ID: m.ID, Result: &wire.EncodedResult{Statement: m.Text, Message: "backed up"}, Archive: &wire.Archive{Name: m.Archive.Name, Bytes: bytes}},
		}
	}
	for _, tc := range []struct {
		name   string
		answer answering
		err    error
	}{
		{"fewer bytes than the reply says", func(m wire.ClientMessage) []wire.ServerMessage {
			return reply(m, good[:len(good)-512], int64(len(good)))
		}, wire.ErrProtocol},
		{"bytes that are no archive", func(m wire.ClientMessage) []wire.ServerMessage {
			return reply(m, []byte("not an archive"), 14)
		}, backup.ErrCorrupt},
		{"a reply without its archive", func(m wire.ClientMessage) []wire.ServerMessage {
			return []wire.ServerMessage{{Type: wire.TypeReply, ID: m.ID, Result: &wire.EncodedResult{Statement: m.Text}}}
		}, wire.ErrProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(ctxT(t), Config{URLs: []string{testserve.H2C(t, tc.answer)}, Logger: quietLogger()})
			require.NoError(t, err)
			defer c.Close()
			dest := filepath.Join(t.TempDir(), "out.nsplbak")
			_, err = c.ExecText(ctxT(t), "BACKUP CLUSTER TO '"+dest+"';")
			require.ErrorIs(t, err, tc.err)
			_, err = os.Lstat(dest)
			require.ErrorIs(t, err, os.ErrNotExist, "nothing was written")
			entries, err := os.ReadDir(filepath.Dir(dest))
			require.NoError(t, err)
			require.Empty(t, entries)
		})
	}

	// The one good answer is written.
	c, err := Dial(ctxT(t), Config{URLs: []string{testserve.H2C(t, answering(func(m wire.ClientMessage) []wire.ServerMessage {
		if m.Archive == nil {
			return []wire.ServerMessage{{Type: wire.TypeArchive, ID: m.ID, Data: good}}
		}
		return reply(m, good, int64(len(good)))
	}))}, Logger: quietLogger()})
	require.NoError(t, err)
	defer c.Close()
	dest := filepath.Join(t.TempDir(), "out.nsplbak")
	exec(t, c, "BACKUP CLUSTER TO '"+dest+"';")
	b, err := os.ReadFile(dest)
	require.NoError(t, err)
	require.Equal(t, good, b)

	// Archive bytes for another statement end the stream.
	_, err = c.ExecText(ctxT(t), "LIST DOMAINS;")
	require.ErrorIs(t, err, ErrConnectionLost)
	require.ErrorContains(t, err, "archive bytes for request")
}
