package server

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// DefaultMaxArchiveUploads bounds the archives a server receives at once
// when Config.MaxArchiveUploads is zero. Each is spooled to a temporary
// file (Config.UploadDir) while it arrives, and held in memory, up to
// backup.MaxArchiveBytes, only while its statement runs.
const DefaultMaxArchiveUploads = 2

// DefaultMaxArchiveUploadsPerIdentity is each identity's share of the
// upload slots when Config.MaxArchiveUploadsPerIdentity is zero.
const DefaultMaxArchiveUploadsPerIdentity = 1

// uploadSlots counts the archives being received, in all and by identity.
// It is bounded by the slots: an identity is kept only while it holds one.
type uploadSlots struct {
	mu         sync.Mutex
	max, share int
	held       int
	byIdentity map[string]int
}

// take takes one slot for identity, or returns the ErrArchiveBusy to
// answer with.
func (u *uploadSlots) take(identity string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.held >= u.max {
		return fmt.Errorf("%w (at most %d)", ErrArchiveBusy, u.max)
	}
	if u.byIdentity[identity] >= u.share {
		return fmt.Errorf("%w: %s already sends %d, its share of this node's %d; send one archive at a time", ErrArchiveBusy, identity, u.share, u.max)
	}
	if u.byIdentity == nil {
		u.byIdentity = make(map[string]int)
	}
	u.byIdentity[identity]++
	u.held++
	return nil
}

// give returns a slot of identity.
func (u *uploadSlots) give(identity string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.held--
	if u.byIdentity[identity] <= 1 {
		delete(u.byIdentity, identity)
		return
	}
	u.byIdentity[identity]--
}

// inUse returns the slots held.
func (u *uploadSlots) inUse() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.held
}

// upload is an archive a client is sending, piece by piece, for the exec
// with the same id. Its bytes go to a temporary file, unlinked as soon as
// it is made, so what arrives costs no memory and a crash leaves nothing.
//
// The stream's reader builds it and claims it for its exec; the request
// that carries it releases its slot. An upload its exec does not claim
// within Limits.UploadTimeout of its first piece is dropped and its slot
// freed by its timer (one goroutine per upload, which claim and release
// stop and wait for).
type upload struct {
	id  uint64
	cap int64 // the most bytes it may hold

	mu      sync.Mutex
	dir     string   // where the spool file is made
	file    *os.File // the spool, made at the first byte; nil once dropped
	size    int64
	err     error // the upload was refused (too large, busy, abandoned); its bytes are dropped
	claimed bool

	spooled *atomic.Int64 // the server's count of spooled bytes; may be nil

	once     sync.Once
	free     func()        // returns the slot; nil without one
	quit     chan struct{} // closed to stop the timer's goroutine
	quitOnce sync.Once
	timerEnd chan struct{} // closed when the timer's goroutine ends; nil without one
}

// beginUpload starts the upload of request id for identity, taking one of
// the server's upload slots and one of the identity's share of them; with
// none free the upload is refused with ErrArchiveBusy and its pieces
// dropped. The slot is freed when the upload is released, or when its
// exec has not claimed it within Limits.UploadTimeout.
func (s *Server) beginUpload(id uint64, identity string) *upload {
	u := &upload{id: id, cap: int64(s.uploadCap), dir: s.cfg.UploadDir, spooled: &s.uploadBytes, quit: make(chan struct{})}
	if err := s.uploadSlots.take(identity); err != nil {
		u.err = err
		return u
	}
	u.free = func() { s.uploadSlots.give(identity) }
	timer := s.cfg.TimeSource.NewTimer(s.cfg.Limits.UploadTimeout)
	u.timerEnd = make(chan struct{})
	go func() { // owned: ends at claim or release, or when the timer fires
		defer close(u.timerEnd)
		defer timer.Stop()
		select {
		case <-timer.C():
			u.abandon(fmt.Errorf("%w: its statement did not follow within %v of the first piece; send the archive and its statement together", ErrArchiveTimeout, s.cfg.Limits.UploadTimeout))
		case <-u.quit:
		}
	}()
	return u
}

// stopTimer stops the upload's timer and waits until its goroutine ended,
// so that after it returns the timer has either abandoned the upload or
// never will.
func (u *upload) stopTimer() {
	u.quitOnce.Do(func() { close(u.quit) })
	if u.timerEnd != nil {
		<-u.timerEnd
	}
}

// abandon drops an upload no exec claimed in time and frees its slot.
func (u *upload) abandon(err error) {
	u.mu.Lock()
	if u.claimed || u.err != nil {
		u.mu.Unlock()
		return
	}
	u.err = err
	u.dropLocked()
	u.mu.Unlock()
	u.freeSlot()
}

// claim marks the upload as its exec's: its timer no longer runs. An upload
// the timer already abandoned keeps its error, which the exec answers.
func (u *upload) claim() {
	u.stopTimer()
	u.mu.Lock()
	defer u.mu.Unlock()
	u.claimed = true
}

// release drops the upload's bytes and gives back its slot; it is safe to
// call more than once and on nil.
func (u *upload) release() {
	if u == nil {
		return
	}
	u.stopTimer()
	u.mu.Lock()
	u.dropLocked()
	u.mu.Unlock()
	u.freeSlot()
}

func (u *upload) freeSlot() {
	u.once.Do(func() {
		if u.free != nil {
			u.free()
		}
	})
}

// dropLocked closes the spool; its bytes are gone (it was unlinked).
func (u *upload) dropLocked() {
	if u.file != nil {
		_ = u.file.Close()
		u.file = nil
	}
	if u.spooled != nil {
		u.spooled.Add(-u.size)
	}
	u.size = 0
}

// failLocked refuses the upload with err and drops what it holds.
func (u *upload) failLocked(err error) {
	u.err = err
	u.dropLocked()
}

// add appends one piece to the spool. Past its cap (backup.MaxArchiveBytes)
// the upload is refused and what it held is dropped at once.
func (u *upload) add(piece []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err != nil {
		return
	}
	if len(piece) > wire.ArchivePieceBytes {
		u.failLocked(fmt.Errorf("%w: an archive piece of %d bytes is over the %d-byte piece limit", ErrProtocol, len(piece), wire.ArchivePieceBytes))
		return
	}
	if u.size+int64(len(piece)) > u.cap {
		u.failLocked(fmt.Errorf("%w: the uploaded archive is over the %d-byte archive cap; nothing was read from it", backup.ErrTooLarge, u.cap))
		return
	}
	if len(piece) == 0 {
		return
	}
	if u.file == nil {
		f, err := os.CreateTemp(u.dir, ".nspl-upload-*")
		if err != nil {
			u.failLocked(fmt.Errorf("%w: the node cannot keep an uploaded archive: %v", ErrUploadStorage, err))
			return
		}
		// Unlinked at once: the open file keeps its bytes, and nothing is
		// left behind if the node stops.
		_ = os.Remove(f.Name())
		u.file = f
	}
	if _, err := u.file.Write(piece); err != nil {
		u.failLocked(fmt.Errorf("%w: the node cannot keep an uploaded archive: %v", ErrUploadStorage, err))
		return
	}
	u.size += int64(len(piece))
	if u.spooled != nil {
		u.spooled.Add(int64(len(piece)))
	}
}

// bytes returns what arrived, read back from the spool, or the upload's
// error.
func (u *upload) bytes() ([]byte, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err != nil {
		return nil, u.err
	}
	if u.file == nil {
		return nil, nil
	}
	b := make([]byte, u.size)
	if _, err := u.file.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("%w: the node cannot read back an uploaded archive: %v", ErrUploadStorage, err)
	}
	return b, nil
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
		b, err := up.bytes()
		if err != nil {
			return nil, err
		}
		x.data = b
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
