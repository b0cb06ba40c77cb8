package server

import (
	"context"
	"fmt"
	"sync"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// DefaultMaxArchiveUploads bounds the archives a server receives at once
// when Config.MaxArchiveUploads is zero. Each may hold up to
// backup.MaxArchiveBytes until its statement ends.
const DefaultMaxArchiveUploads = 2

// upload is an archive a client is sending, piece by piece, for the exec
// with the same id. The stream's reader builds it; the request that
// carries it releases its slot.
type upload struct {
	id   uint64
	cap  int // the most bytes it may hold
	data []byte
	err  error // the upload was refused (too large, busy); data is dropped
	once sync.Once
	free func()
}

// release gives back the upload's slot; it is safe to call more than once
// and on nil.
func (u *upload) release() {
	if u == nil {
		return
	}
	u.once.Do(func() {
		u.data = nil
		if u.free != nil {
			u.free()
		}
	})
}

// beginUpload starts the upload of request id, taking one of the server's
// upload slots; with none free the upload is refused with ErrArchiveBusy
// and its pieces dropped.
func (s *Server) beginUpload(id uint64) *upload {
	u := &upload{id: id, cap: s.uploadCap}
	select {
	case s.uploads <- struct{}{}:
		u.free = func() { <-s.uploads }
	default:
		u.err = fmt.Errorf("%w (at most %d)", ErrArchiveBusy, cap(s.uploads))
	}
	return u
}

// add appends one piece. Past its cap (backup.MaxArchiveBytes) the upload
// is refused and what it held is dropped at once.
func (u *upload) add(piece []byte) {
	if u.err != nil {
		return
	}
	if len(piece) > wire.ArchivePieceBytes {
		u.err = fmt.Errorf("%w: an archive piece of %d bytes is over the %d-byte piece limit", ErrProtocol, len(piece), wire.ArchivePieceBytes)
		u.data = nil
		return
	}
	if len(u.data)+len(piece) > u.cap {
		u.err = fmt.Errorf("%w: the uploaded archive is over the %d-byte archive cap; nothing was read from it", backup.ErrTooLarge, u.cap)
		u.data = nil
		return
	}
	u.data = append(u.data, piece...)
}

// transfer is the archive of the request running on a stream: the
// uploaded one a RESTORE or DESCRIBE BACKUP reads, or the one a BACKUP
// captured for the reply.
type transfer struct {
	name string // the client's file, for messages only
	read bool   // RESTORE or DESCRIBE BACKUP
	data []byte // uploaded (read) or captured (write)
}

// archivePlan reports whether p reads an archive (RESTORE, DESCRIBE
// BACKUP) or writes one (BACKUP), and whether it is one of them at all.
func archivePlan(p planner.Plan) (read, ok bool) {
	switch p.(type) {
	case planner.Backup:
		return false, true
	case planner.Restore, planner.DescribeBackup:
		return true, true
	}
	return false, false
}

// prepareTransfer checks the archive a request carries against its plan
// and returns the transfer the session's Archives will see, or the error
// to answer the request with.
func prepareTransfer(p planner.Plan, m wire.ClientMessage, up *upload) (*transfer, error) {
	read, ok := archivePlan(p)
	if !ok {
		if m.Archive != nil || up != nil {
			return nil, fmt.Errorf("%w: an archive accompanies only BACKUP, RESTORE and DESCRIBE BACKUP", ErrProtocol)
		}
		return nil, nil
	}
	if m.Archive == nil {
		return nil, ErrArchiveRequired
	}
	x := &transfer{name: m.Archive.Name, read: read}
	if !read {
		if up != nil {
			return nil, fmt.Errorf("%w: BACKUP uploads no archive; the node sends it back", ErrProtocol)
		}
		return x, nil
	}
	if up != nil {
		if up.err != nil {
			return nil, up.err
		}
		x.data = up.data
	}
	if int64(len(x.data)) != m.Archive.Bytes {
		return nil, fmt.Errorf("%w: the request says its archive holds %d bytes but %d arrived", ErrProtocol, m.Archive.Bytes, len(x.data))
	}
	return x, nil
}

// WriteArchive keeps the archive a BACKUP captured, encoded, for the
// reply that sends it to the client. name, the statement's path, is not
// used: the client named its file in the request.
func (st *stream) WriteArchive(_ context.Context, _ string, a backup.Archive) (string, int64, error) {
	x := st.transfer
	if x == nil || x.read {
		return "", 0, ErrArchiveRequired
	}
	b, err := backup.Encode(a)
	if err != nil {
		return x.name, 0, err
	}
	x.data = b
	return x.name, int64(len(b)), nil
}

// ReadArchive verifies the archive the client uploaded (backup.Decode)
// and returns it. name, the statement's path, is never opened.
func (st *stream) ReadArchive(_ context.Context, _ string) (string, backup.Archive, error) {
	x := st.transfer
	if x == nil || !x.read {
		return "", backup.Archive{}, ErrArchiveRequired
	}
	a, err := backup.DecodeNamed(x.name, x.data)
	return x.name, a, err
}

// writeArchiveLocked sends a BACKUP's archive in pieces before its reply.
func (st *stream) writeArchiveLocked(id uint64, b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), wire.ArchivePieceBytes)
		if !st.writeLocked(wire.ServerMessage{Type: wire.TypeArchive, ID: id, Data: b[:n]}) {
			return false
		}
		b = b[n:]
	}
	return true
}
