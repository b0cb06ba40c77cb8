package catalog

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/nspl-dev/nspl/lifecycle"
)

// Snapshot framing. A catalog snapshot is
//
//	magic   8 bytes  "nsplcat" followed by the format version (1, 2 or 3)
//	length  8 bytes  big-endian length of the payload
//	payload          the version's payload
//	crc     4 bytes  big-endian CRC-32C (Castagnoli) of the payload
//
// so a truncated or corrupted snapshot is refused instead of restoring a
// partial catalog, and a later format can be told apart by its version.
//
// The payload of version 1, which builds before request ids wrote, is the
// lifecycle.State.MarshalSnapshot bytes alone. Version 2 is the JSON object
//
//	{"state": <lifecycle.State.MarshalSnapshot>, "requests": [{"id": ..., "result": ...}, ...]}
//
// whose requests are the FSM's window of remembered request ids, oldest
// first (see RequestWindow). Version 3, the one written now, holds the same
// two parts with the state in lifecycle's binary snapshot, which restores
// a large catalog several times faster than its JSON:
//
//	uvarint n   the length of the state
//	n bytes     lifecycle.State.MarshalSnapshotBinary
//	the rest    the requests, as the JSON array of version 2
//
// A version 1 snapshot restores with an empty window: the commands of the
// log it covers carry no request id. Every version still restores.
const (
	snapshotMagic   = "nsplcat"
	snapshotV1      = 1
	snapshotV2      = 2
	snapshotVersion = 3
	headerLen       = len(snapshotMagic) + 1 + 8
	// MaxSnapshotBytes bounds the payload a snapshot may declare, so a
	// corrupt length cannot make Restore allocate without bound.
	MaxSnapshotBytes = 1 << 30
)

// castagnoli is the snapshot checksum's table, built on the first snapshot
// written or read rather than at process start: building it costs a
// measurable share of a short-lived process (nspl -c) that never snapshots.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// snapshotPayload is the payload of snapshot version 2.
type snapshotPayload struct {
	State    json.RawMessage     `json:"state"`
	Requests []rememberedRequest `json:"requests"`
}

// encodeSnapshot returns the version 3 payload of a state and its request
// window. Equal inputs give equal bytes.
func encodeSnapshot(s *lifecycle.State, requests []rememberedRequest) ([]byte, error) {
	state, err := s.MarshalSnapshotBinary()
	if err != nil {
		return nil, err
	}
	if requests == nil {
		requests = []rememberedRequest{}
	}
	reqs, err := json.Marshal(requests)
	if err != nil {
		return nil, fmt.Errorf("catalog: encode snapshot: %w", err)
	}
	b := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(state)+len(reqs)), uint64(len(state)))
	return append(append(b, state...), reqs...), nil
}

// decodeSnapshot decodes the payload of a snapshot of the given version
// into a state and a request window of windowSize.
func decodeSnapshot(version byte, payload []byte, windowSize int) (*lifecycle.State, *requestWindow, error) {
	state, requests := payload, []rememberedRequest(nil)
	switch version {
	case snapshotVersion:
		n, used := binary.Uvarint(payload)
		if used <= 0 || n > uint64(len(payload)-used) {
			return nil, nil, fmt.Errorf("%w: payload does not hold the state length it declares", ErrSnapshot)
		}
		state = payload[used : used+int(n)]
		dec := json.NewDecoder(bytes.NewReader(payload[used+int(n):]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&requests); err != nil {
			return nil, nil, fmt.Errorf("%w: request window does not decode: %v", ErrSnapshot, err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%w: payload has trailing data", ErrSnapshot)
		}
		if requests == nil {
			return nil, nil, fmt.Errorf("%w: payload has no request window", ErrSnapshot)
		}
	case snapshotV2:
		var p snapshotPayload
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, nil, fmt.Errorf("%w: payload does not decode: %v", ErrSnapshot, err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%w: payload has trailing data", ErrSnapshot)
		}
		if p.Requests == nil {
			return nil, nil, fmt.Errorf("%w: payload has no request window", ErrSnapshot)
		}
		state, requests = p.State, p.Requests
	}
	s, err := lifecycle.RestoreSnapshot(state)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	w, err := restoreRequestWindow(windowSize, requests, s.Revision())
	if err != nil {
		return nil, nil, err
	}
	return s, w, nil
}

// writeSnapshot frames a version 3 payload onto w.
func writeSnapshot(w io.Writer, payload []byte) error {
	return writeFrame(w, snapshotVersion, payload)
}

// writeFrame frames payload as the given version onto w.
func writeFrame(w io.Writer, version byte, payload []byte) error {
	var hdr [headerLen]byte
	copy(hdr[:], snapshotMagic)
	hdr[len(snapshotMagic)] = version
	binary.BigEndian.PutUint64(hdr[len(snapshotMagic)+1:], uint64(len(payload)))
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], crc32.Checksum(payload, castagnoli()))
	for _, b := range [][]byte{hdr[:], payload, crc[:]} {
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("catalog: write snapshot: %w", err)
		}
	}
	return nil
}

// readSnapshot reads one framed snapshot from r and returns its version
// and payload. Trailing bytes after the checksum are an error.
func readSnapshot(r io.Reader) (byte, []byte, error) {
	var hdr [headerLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, fmt.Errorf("%w: header: %w", ErrSnapshot, noEOF(err))
	}
	if string(hdr[:len(snapshotMagic)]) != snapshotMagic {
		return 0, nil, fmt.Errorf("%w: magic %q is not %q", ErrSnapshot, hdr[:len(snapshotMagic)], snapshotMagic)
	}
	version := hdr[len(snapshotMagic)]
	if version < snapshotV1 || version > snapshotVersion {
		return 0, nil, fmt.Errorf("%w: format version %d is not supported (this build reads %d to %d); use a newer nspl", ErrSnapshot, version, snapshotV1, snapshotVersion)
	}
	n := binary.BigEndian.Uint64(hdr[len(snapshotMagic)+1:])
	if n > MaxSnapshotBytes {
		return 0, nil, fmt.Errorf("%w: payload length %d exceeds the limit of %d bytes", ErrSnapshot, n, MaxSnapshotBytes)
	}
	// Grow the buffer as bytes arrive rather than trusting the length.
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		return 0, nil, fmt.Errorf("%w: payload of %d bytes: %w", ErrSnapshot, n, noEOF(err))
	}
	var crc [4]byte
	if _, err := io.ReadFull(r, crc[:]); err != nil {
		return 0, nil, fmt.Errorf("%w: checksum: %w", ErrSnapshot, noEOF(err))
	}
	payload := buf.Bytes()
	if got, want := crc32.Checksum(payload, castagnoli()), binary.BigEndian.Uint32(crc[:]); got != want {
		return 0, nil, fmt.Errorf("%w: checksum %08x does not match %08x", ErrSnapshot, got, want)
	}
	var extra [1]byte
	if _, err := io.ReadFull(r, extra[:]); err == nil {
		return 0, nil, fmt.Errorf("%w: unexpected bytes after the checksum", ErrSnapshot)
	}
	return version, payload, nil
}

// noEOF turns a premature end of input into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
