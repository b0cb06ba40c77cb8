package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// rawSession is one session spoken line by line.
type rawSession struct {
	t    *testing.T
	pw   *io.PipeWriter
	lr   *wire.LineReader
	body io.Closer // the response body, when the session may be cut
}

func openRaw(t *testing.T, url string) *rawSession {
	t.Helper()
	hc := h2c()
	t.Cleanup(hc.CloseIdleConnections)
	return openRawWith(t, hc, url)
}

// openRawWith opens a raw session with the client hc.
func openRawWith(t *testing.T, hc *http.Client, url string) *rawSession {
	t.Helper()
	pr, pw := io.Pipe()
	resp, err := hc.Post(url+wire.SessionPath, "application/x-ndjson", pr)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	t.Cleanup(func() {
		_ = pw.Close()
		_ = resp.Body.Close()
	})
	s := &rawSession{t: t, pw: pw, lr: wire.NewLineReader(resp.Body, wire.ServerMessageLimit)}
	require.Equal(t, wire.TypeWelcome, s.read().Type)
	return s
}

func (s *rawSession) send(m wire.ClientMessage) {
	s.t.Helper()
	b, err := json.Marshal(m)
	require.NoError(s.t, err)
	_, err = s.pw.Write(append(b, '\n'))
	require.NoError(s.t, err)
}

func (s *rawSession) read() wire.ServerMessage {
	s.t.Helper()
	line, err := s.lr.Next()
	require.NoError(s.t, err)
	var m wire.ServerMessage
	require.NoError(s.t, json.Unmarshal(line, &m))
	return m
}

// upload sends b as the archive pieces of request id.
func (s *rawSession) upload(id uint64, b []byte) {
	for len(b) > 0 {
		n := min(len(b), wire.ArchivePieceBytes)
		s.send(wire.ClientMessage{Type: wire.TypeArchive, ID: id, Data: b[:n]})
		b = b[n:]
	}
}

// encodedArchive returns an archive of n never-started domains.
func encodedArchive(t testing.TB, n int) []byte {
	t.Helper()
	a := backup.Archive{Version: backup.Version, CapturedAt: int64(1767225600) * int64(time.Second), Scope: backup.ScopeCluster, Node: "elsewhere"}
	for i := range n {
		a.Domains = append(a.Domains, backup.Domain{Record: lifecycle.Domain{
			Name: fmt.Sprintf("d%05d", i), Pace: lifecycle.Unpaced, Status: lifecycle.Stopped}})
	}
	b, err := backup.Encode(a)
	require.NoError(t, err)
	return b
}

// TestArchiveStatementsNeverOpenServerPaths sends BACKUP, RESTORE and
// DESCRIBE BACKUP without an archive, naming files on the server's host: an
// archive, a symbolic link to it, a path through "..", a missing file,
// /dev/zero and a FIFO. Each is refused with the same error, whatever the
// path is, and nothing is read, followed, blocked on or written.
func TestArchiveStatementsNeverOpenServerPaths(t *testing.T) {
	url, srv := insecureEnv(t, Config{})
	s := openRaw(t, url)
	dir := t.TempDir()
	archive := filepath.Join(dir, "a.nsplbak")
	require.NoError(t, os.WriteFile(archive, encodedArchive(t, 1), 0o600))
	link := filepath.Join(dir, "link.nsplbak")
	require.NoError(t, os.Symlink(archive, link))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	precious := filepath.Join(dir, "precious.txt")
	require.NoError(t, os.WriteFile(precious, []byte("keep"), 0o644))

	id := uint64(0)
	for _, path := range []string{archive, link, filepath.Join(dir, "sub", "..", "a.nsplbak"), filepath.Join(dir, "missing"), "/dev/zero", fifo} {
		for _, stmt := range []string{"DESCRIBE BACKUP '%s';", "RESTORE CLUSTER FROM '%s';", "RESTORE DOMAIN d00000 FROM '%s' DRY RUN;"} {
			id++
			s.send(wire.ClientMessage{Type: wire.TypeExec, ID: id, Text: fmt.Sprintf(stmt, path)})
			m := s.read()
			require.Equal(t, wire.TypeError, m.Type, stmt, path)
			require.Equal(t, "archive_required", m.Error.Code, m.Error.Message)
			require.Equal(t, ErrArchiveRequired.Error(), m.Error.Message, "the answer says nothing about the path")
		}
	}
	for _, path := range []string{filepath.Join(dir, "new.nsplbak"), precious, archive} {
		id++
		s.send(wire.ClientMessage{Type: wire.TypeExec, ID: id, Text: fmt.Sprintf("BACKUP CLUSTER TO '%s';", path)})
		m := s.read()
		require.Equal(t, "archive_required", m.Error.Code, m.Error.Message)
	}
	_, err := os.Lstat(filepath.Join(dir, "new.nsplbak"))
	require.ErrorIs(t, err, os.ErrNotExist, "BACKUP wrote nothing on the server")
	b, err := os.ReadFile(precious)
	require.NoError(t, err)
	require.Equal(t, "keep", string(b))
	fi, err := os.Stat(precious)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "nor changed its mode")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 4, "no temporary file either")
	require.Empty(t, srv.cfg.Node.Domains(), "nothing was restored")
}

// TestRemoteBackupSendsTheArchive checks a BACKUP's archive travels back in
// pieces before its reply, and that the server writes no file anywhere,
// not even at the path the client names.
func TestRemoteBackupSendsTheArchive(t *testing.T) {
	url, _ := insecureEnv(t, Config{})
	s := openRaw(t, url)
	dir := t.TempDir()
	s.send(wire.ClientMessage{Type: wire.TypeExec, ID: 1, Text: "CREATE DOMAIN web;"})
	require.Equal(t, wire.TypeReply, s.read().Type)
	clientFile := filepath.Join(dir, "client.nsplbak")
	s.send(wire.ClientMessage{Type: wire.TypeExec, ID: 2, Text: "BACKUP CLUSTER TO '" + clientFile + "';", Archive: &wire.Archive{Name: clientFile}})
	var got []byte
	m := s.read()
	for m.Type == wire.TypeArchive {
		require.Equal(t, uint64(2), m.ID)
		require.LessOrEqual(t, len(m.Data), wire.ArchivePieceBytes)
		got = append(got, m.Data...)
		m = s.read()
	}
	require.Equal(t, wire.TypeReply, m.Type, m.Error)
	require.Equal(t, &wire.Archive{Name: clientFile, Bytes: int64(len(got))}, m.Archive)
	require.Contains(t, m.Result.Message, "backed up cluster (1 domain) to '"+clientFile+"'")
	a, err := backup.Decode(got)
	require.NoError(t, err)
	require.Equal(t, []string{"web"}, a.Names())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the server wrote nothing")
}

// TestUploadedArchives checks RESTORE and DESCRIBE BACKUP read the archive
// the client uploaded (in several pieces), verified on the node, and that
// every malformed or oversized upload is refused and frees its slot.
func TestUploadedArchives(t *testing.T) {
	url, srv := insecureEnv(t, Config{})
	s := openRaw(t, url)
	big := encodedArchive(t, 1500)
	require.Greater(t, len(big), 2*wire.ArchivePieceBytes, "the archive takes several pieces")
	small := encodedArchive(t, 1)
	corrupt := append([]byte(nil), small...)
	corrupt[600] ^= 0xff
	nowhere := "/nonexistent/server/path.nsplbak"

	id := uint64(0)
	exec := func(text string, archive *wire.Archive, pieces []byte) wire.ServerMessage {
		t.Helper()
		id++
		s.upload(id, pieces)
		s.send(wire.ClientMessage{Type: wire.TypeExec, ID: id, Text: text, Archive: archive})
		m := s.read()
		require.Equal(t, id, m.ID)
		require.Eventually(t, func() bool { return srv.uploadSlots.inUse() == 0 }, 10*time.Second, time.Millisecond, "the upload's slot is free again")
		return m
	}

	m := exec("DESCRIBE BACKUP '"+nowhere+"';", &wire.Archive{Name: "/home/me/big.nsplbak", Bytes: int64(len(big))}, big)
	require.Equal(t, wire.TypeReply, m.Type, m.Error)
	require.Len(t, m.Result.Set.Rows, 1500)
	require.Contains(t, m.Result.Message, "backup '/home/me/big.nsplbak': format version 1")

	m = exec("RESTORE DOMAIN d00000 FROM '"+nowhere+"';", &wire.Archive{Name: "/home/me/small.nsplbak", Bytes: int64(len(small))}, small)
	require.Equal(t, wire.TypeReply, m.Type, m.Error)
	require.Contains(t, m.Result.Message, "from '/home/me/small.nsplbak'")
	_, err := srv.cfg.Node.Domain("d00000")
	require.NoError(t, err)

	for _, tc := range []struct {
		name    string
		text    string
		archive *wire.Archive
		pieces  []byte
		code    string
	}{
		{"corrupt archive", "DESCRIBE BACKUP 'x';", &wire.Archive{Name: "c", Bytes: int64(len(corrupt))}, corrupt, "archive_corrupt"},
		{"empty upload", "DESCRIBE BACKUP 'x';", &wire.Archive{Name: "e"}, nil, "archive_corrupt"},
		{"fewer bytes than said", "DESCRIBE BACKUP 'x';", &wire.Archive{Name: "s", Bytes: int64(len(small)) + 1}, small, "protocol"},
		{"pieces for a statement without an archive", "LIST DOMAINS;", nil, small, "protocol"},
		{"an archive field on a statement without one", "LIST DOMAINS;", &wire.Archive{Name: "s"}, nil, "protocol"},
		{"pieces for a BACKUP", "BACKUP CLUSTER TO 'x';", &wire.Archive{Name: "s"}, small, "protocol"},
		{"pieces without the archive field", "DESCRIBE BACKUP 'x';", nil, small, "archive_required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := exec(tc.text, tc.archive, tc.pieces)
			require.Equal(t, wire.TypeError, m.Type)
			require.Equal(t, tc.code, m.Error.Code, m.Error.Message)
		})
	}

	// Pieces that no exec claims are dropped with their slot.
	id++
	s.upload(id, small)
	m = exec("LIST DOMAINS;", nil, nil)
	require.Equal(t, wire.TypeReply, m.Type, m.Error)
}

// TestUploadOverTheCap checks an upload past its cap (backup.MaxArchiveBytes,
// lowered here to keep the test small) is refused, its bytes dropped as
// soon as it passes the cap.
func TestUploadOverTheCap(t *testing.T) {
	const limit = 3 * wire.ArchivePieceBytes
	url, srv := insecureEnv(t, Config{uploadCap: limit})
	require.Equal(t, limit, srv.uploadCap)
	s := openRaw(t, url)
	piece := make([]byte, wire.ArchivePieceBytes)
	total := 0
	for total <= limit {
		s.send(wire.ClientMessage{Type: wire.TypeArchive, ID: 1, Data: piece})
		total += len(piece)
	}
	s.send(wire.ClientMessage{Type: wire.TypeExec, ID: 1, Text: "DESCRIBE BACKUP 'x';", Archive: &wire.Archive{Name: "x", Bytes: int64(total)}})
	m := s.read()
	require.Equal(t, wire.TypeError, m.Type)
	require.Equal(t, "archive_too_large", m.Error.Code, m.Error.Message)
	require.Contains(t, m.Error.Message, fmt.Sprintf("over the %d-byte archive cap", limit))
	require.Eventually(t, func() bool { return srv.uploadSlots.inUse() == 0 }, 10*time.Second, time.Millisecond)
}

// TestUploadsAreBounded checks the server receives at most
// MaxArchiveUploads archives at once, across sessions.
func TestUploadsAreBounded(t *testing.T) {
	_, defaults := insecureEnv(t, Config{})
	require.Equal(t, backup.MaxArchiveBytes, defaults.uploadCap, "uploads are capped as archive files are")
	require.Equal(t, DefaultMaxArchiveUploads, defaults.uploadSlots.max)

	url, srv := insecureEnv(t, Config{MaxArchiveUploads: 1})
	small := encodedArchive(t, 1)
	first, second := openRaw(t, url), openRaw(t, url)
	first.send(wire.ClientMessage{Type: wire.TypeArchive, ID: 1, Data: small})
	require.Eventually(t, func() bool { return srv.uploadSlots.inUse() == 1 }, 10*time.Second, time.Millisecond)

	second.upload(1, small)
	second.send(wire.ClientMessage{Type: wire.TypeExec, ID: 1, Text: "DESCRIBE BACKUP 'x';", Archive: &wire.Archive{Name: "x", Bytes: int64(len(small))}})
	m := second.read()
	require.Equal(t, "archive_busy", m.Error.Code, m.Error.Message)

	first.send(wire.ClientMessage{Type: wire.TypeExec, ID: 1, Text: "DESCRIBE BACKUP 'x';", Archive: &wire.Archive{Name: "x", Bytes: int64(len(small))}})
	m = first.read()
	require.Equal(t, wire.TypeReply, m.Type, m.Error)
	require.Eventually(t, func() bool { return srv.uploadSlots.inUse() == 0 }, 10*time.Second, time.Millisecond)
	second.upload(2, small)
	second.send(wire.ClientMessage{Type: wire.TypeExec, ID: 2, Text: "DESCRIBE BACKUP 'x';", Archive: &wire.Archive{Name: "x", Bytes: int64(len(small))}})
	m = second.read()
	require.Equal(t, wire.TypeReply, m.Type, m.Error)
	require.True(t, strings.HasPrefix(m.Result.Message, "backup 'x'"))
}

// FuzzArchiveRequest decodes client messages as the stream's reader does,
// gathers archive pieces into an upload and checks each exec against it:
// an upload never holds more than its cap, and a transfer is prepared only
// for an archive statement whose archive arrived whole.
func FuzzArchiveRequest(f *testing.F) {
	small := encodedArchive(f, 1)
	piece, _ := json.Marshal(wire.ClientMessage{Type: wire.TypeArchive, ID: 1, Data: small})
	exec, _ := json.Marshal(wire.ClientMessage{Type: wire.TypeExec, ID: 1, Text: "DESCRIBE BACKUP 'x';", Archive: &wire.Archive{Name: "x", Bytes: int64(len(small))}})
	f.Add(piece, exec)
	f.Add([]byte(`{"type":"archive","id":1,"data":"AAAA"}`), []byte(`{"type":"exec","id":1,"text":"BACKUP CLUSTER TO 'x';","archive":{"name":"x","bytes":0}}`))
	f.Add([]byte(`{"type":"archive","id":1,"data":"!!"}`), []byte(`{"type":"exec","id":1,"text":"LIST DOMAINS;"}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, first, second []byte) {
		const limit = 1 << 10
		up := &upload{id: 1, cap: limit, dir: dir, quit: make(chan struct{})}
		defer up.release()
		for _, line := range [][]byte{first, second} {
			var m wire.ClientMessage
			if err := wire.UnmarshalStrict(line, &m); err != nil {
				require.ErrorIs(t, err, ErrProtocol)
				continue
			}
			switch m.Type {
			case wire.TypeArchive:
				up.add(m.Data)
				require.LessOrEqual(t, up.size, int64(limit))
				if up.err != nil {
					require.Nil(t, up.file, "a refused upload holds nothing")
					require.Zero(t, up.size)
				}
			case wire.TypeExec:
				stmt, err := grammar.ParseStatement(m.Text)
				if err != nil {
					continue
				}
				plan, err := planner.PlanStatement(stmt)
				if err != nil {
					continue
				}
				x, err := prepareTransfer(plan, m, up)
				if err != nil {
					require.Nil(t, x)
					continue
				}
				read, ok := archivePlan(plan)
				if !ok {
					require.Nil(t, x)
					continue
				}
				require.NotNil(t, x)
				require.Equal(t, read, x.read)
				if read {
					require.Equal(t, m.Archive.Bytes, int64(len(x.data)))
				}
			}
		}
	})
}
