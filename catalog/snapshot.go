package catalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Snapshot framing. A catalog snapshot is
//
//	magic   8 bytes  "nsplcat" followed by the format version (1)
//	length  8 bytes  big-endian length of the payload
//	payload          lifecycle.State.MarshalSnapshot bytes
//	crc     4 bytes  big-endian CRC-32C (Castagnoli) of the payload
//
// so a truncated or corrupted snapshot is refused instead of restoring a
// partial catalog, and a later format can be told apart by its version.
const (
	snapshotMagic   = "nsplcat"
	snapshotVersion = 1
	headerLen       = len(snapshotMagic) + 1 + 8
	// MaxSnapshotBytes bounds the payload a snapshot may declare, so a
	// corrupt length cannot make Restore allocate without bound.
	MaxSnapshotBytes = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// writeSnapshot frames payload onto w.
func writeSnapshot(w io.Writer, payload []byte) error {
	var hdr [headerLen]byte
	copy(hdr[:], snapshotMagic)
	hdr[len(snapshotMagic)] = snapshotVersion
	binary.BigEndian.PutUint64(hdr[len(snapshotMagic)+1:], uint64(len(payload)))
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], crc32.Checksum(payload, castagnoli))
	for _, b := range [][]byte{hdr[:], payload, crc[:]} {
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("catalog: write snapshot: %w", err)
		}
	}
	return nil
}

// readSnapshot reads one framed snapshot from r and returns its payload.
// Trailing bytes after the checksum are an error.
func readSnapshot(r io.Reader) ([]byte, error) {
	var hdr [headerLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrSnapshot, noEOF(err))
	}
	if string(hdr[:len(snapshotMagic)]) != snapshotMagic {
		return nil, fmt.Errorf("%w: magic %q is not %q", ErrSnapshot, hdr[:len(snapshotMagic)], snapshotMagic)
	}
	if v := hdr[len(snapshotMagic)]; v != snapshotVersion {
		return nil, fmt.Errorf("%w: format version %d is not supported (this build reads %d); use a newer nspl", ErrSnapshot, v, snapshotVersion)
	}
	n := binary.BigEndian.Uint64(hdr[len(snapshotMagic)+1:])
	if n > MaxSnapshotBytes {
		return nil, fmt.Errorf("%w: payload length %d exceeds the limit of %d bytes", ErrSnapshot, n, MaxSnapshotBytes)
	}
	// Grow the buffer as bytes arrive rather than trusting the length.
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		return nil, fmt.Errorf("%w: payload of %d bytes: %w", ErrSnapshot, n, noEOF(err))
	}
	var crc [4]byte
	if _, err := io.ReadFull(r, crc[:]); err != nil {
		return nil, fmt.Errorf("%w: checksum: %w", ErrSnapshot, noEOF(err))
	}
	payload := buf.Bytes()
	if got, want := crc32.Checksum(payload, castagnoli), binary.BigEndian.Uint32(crc[:]); got != want {
		return nil, fmt.Errorf("%w: checksum %08x does not match %08x", ErrSnapshot, got, want)
	}
	var extra [1]byte
	if _, err := io.ReadFull(r, extra[:]); err == nil {
		return nil, fmt.Errorf("%w: unexpected bytes after the checksum", ErrSnapshot)
	}
	return payload, nil
}

// noEOF turns a premature end of input into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
