package server

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/wire"
)

// describe sends DESCRIBE BACKUP as exec id claiming n uploaded bytes and
// returns the answer.
func (s *rawSession) describe(id uint64, n int) wire.ServerMessage {
	s.t.Helper()
	s.send(wire.ClientMessage{Type: wire.TypeExec, ID: id, Text: "DESCRIBE BACKUP 'x';", Archive: &wire.Archive{Name: "x", Bytes: int64(n)}})
	return s.read()
}

// TestAbandonedUploadFreesItsSlot: a session that sends one archive piece
// and then only pings holds its upload slot until UploadTimeout after that
// piece, not a nanosecond less, and then loses it: another identity's
// upload is admitted, and the late statement gets archive_timeout.
func TestAbandonedUploadFreesItsSlot(t *testing.T) {
	l, err := Limits{}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, 5*time.Minute, l.UploadTimeout, "the production default")

	const bound = 3 * time.Minute
	fake := timesource.NewFake(0)
	e := newTLSEnv(t, Config{TimeSource: fake, MaxArchiveUploads: 1, Limits: Limits{UploadTimeout: bound}})
	small := encodedArchive(t, 1)
	alice := openRawWith(t, e.clientHTTP(t, "alice"), e.url)
	bob := openRawWith(t, e.clientHTTP(t, "bob"), e.url)

	alice.send(wire.ClientMessage{Type: wire.TypeArchive, ID: 1, Data: small[:512]})
	require.NoError(t, fake.BlockUntilDue(ctxT(t), bound), "the upload's timer is armed")
	require.Equal(t, 1, e.srv.uploadSlots.inUse())

	fake.Advance(bound - time.Nanosecond)
	alice.send(wire.ClientMessage{Type: wire.TypePing})
	bob.upload(1, small)
	m := bob.describe(1, len(small))
	require.Equal(t, "archive_busy", m.Error.Code, "just inside the bound the slot is still held: %s", m.Error.Message)

	fake.Advance(time.Nanosecond)
	require.Eventually(t, func() bool { return e.srv.uploadSlots.inUse() == 0 }, 10*time.Second, time.Millisecond, "at the bound the slot is freed")
	alice.send(wire.ClientMessage{Type: wire.TypePing})
	bob.upload(2, small)
	m = bob.describe(2, len(small))
	require.Equal(t, wire.TypeReply, m.Type, "another identity uploads once the slot is free: %v", m.Error)

	m = alice.describe(1, 512)
	require.Equal(t, wire.TypeError, m.Type)
	require.Equal(t, "archive_timeout", m.Error.Code, m.Error.Message)
	require.Contains(t, m.Error.Message, "did not follow within 3m0s")
}

// TestUploadSlotsArePerIdentity: one identity holds at most its share of
// the upload slots, so another identity still gets one; the share is a
// bound at, inside and past which uploads are counted.
func TestUploadSlotsArePerIdentity(t *testing.T) {
	_, defaults := insecureEnv(t, Config{})
	require.Equal(t, 1, defaults.uploadSlots.share, "the production default share")
	require.Equal(t, DefaultMaxArchiveUploadsPerIdentity, defaults.cfg.MaxArchiveUploadsPerIdentity)

	for _, tc := range []struct {
		name  string
		share int
		busy  bool // alice's second concurrent upload is refused
	}{
		{"at the share", 1, true},
		{"inside the share", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTLSEnv(t, Config{MaxArchiveUploads: 3, MaxArchiveUploadsPerIdentity: tc.share})
			small := encodedArchive(t, 1)
			aliceHTTP := e.clientHTTP(t, "alice")
			a1, a2 := openRawWith(t, aliceHTTP, e.url), openRawWith(t, aliceHTTP, e.url)
			a1.send(wire.ClientMessage{Type: wire.TypeArchive, ID: 1, Data: small})
			require.Eventually(t, func() bool { return e.srv.uploadSlots.inUse() == 1 }, 10*time.Second, time.Millisecond)
			a2.upload(1, small)
			m := a2.describe(1, len(small))
			if tc.busy {
				require.Equal(t, "archive_busy", m.Error.Code)
				require.Contains(t, m.Error.Message, "nspl-client://alice already sends 1, its share")
			} else {
				require.Equal(t, wire.TypeReply, m.Type, m.Error)
			}
			bob := openRawWith(t, e.clientHTTP(t, "bob"), e.url)
			bob.upload(1, small)
			m = bob.describe(1, len(small))
			require.Equal(t, wire.TypeReply, m.Type, "another identity is not refused: %v", m.Error)
			m = a1.describe(1, len(small))
			require.Equal(t, wire.TypeReply, m.Type, m.Error)
		})
	}
	// A share above the total is the total.
	_, capped := insecureEnv(t, Config{MaxArchiveUploads: 2, MaxArchiveUploadsPerIdentity: 5})
	require.Equal(t, 2, capped.uploadSlots.share)
}

// heapInUse returns the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestUploadIsSpooledNotHeld: an upload of the whole archive cap (64 MiB)
// costs the node's heap a small bound while it arrives, not its size: its
// bytes are in an unlinked file of the upload directory. One byte more is
// refused with archive_too_large and the spool dropped. Under the race
// detector, which makes 64 MiB of JSON pieces take half a minute, the cap
// is lowered to 8 MiB and the bound to 4 MiB, which still tells a spooled
// upload from one held in memory.
func TestUploadIsSpooledNotHeld(t *testing.T) {
	limit, bound := backup.MaxArchiveBytes, 16<<20
	if raceEnabled {
		limit, bound = 8<<20, 4<<20
	}
	dir := t.TempDir()
	url, srv := insecureEnv(t, Config{UploadDir: dir, uploadCap: limit})
	require.Equal(t, limit, srv.uploadCap)
	s := openRaw(t, url)
	piece := make([]byte, wire.ArchivePieceBytes)
	before := heapInUse()
	total := 0
	for total < limit {
		n := min(len(piece), limit-total)
		s.send(wire.ClientMessage{Type: wire.TypeArchive, ID: 1, Data: piece[:n]})
		total += n
	}
	require.Eventually(t, func() bool { return srv.uploadBytes.Load() == int64(total) }, time.Minute, time.Millisecond, "the node received every piece")
	held := heapInUse()
	t.Logf("heap in use before the upload %d MiB, holding %d MiB of upload: %d MiB (%+d KiB)",
		before>>20, total>>20, held>>20, (int64(held)-int64(before))>>10)
	require.Less(t, int64(held)-int64(before), int64(bound), "holding an upload of the cap costs the heap less than the bound")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the spool file is unlinked")

	s.send(wire.ClientMessage{Type: wire.TypeArchive, ID: 1, Data: []byte{0}})
	m := s.describe(1, total+1)
	require.Equal(t, "archive_too_large", m.Error.Code, m.Error.Message)
	require.Zero(t, srv.uploadBytes.Load(), "the spool of a refused upload is dropped")
	require.Eventually(t, func() bool { return srv.uploadSlots.inUse() == 0 }, 10*time.Second, time.Millisecond)
}
