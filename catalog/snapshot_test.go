package catalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func framed(t testing.TB, payload []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, writeSnapshot(&b, payload))
	return b.Bytes()
}

func TestSnapshotFraming(t *testing.T) {
	payload := []byte(`{"version":1,"revision":3}`)
	good := framed(t, payload)
	require.Len(t, good, headerLen+len(payload)+4)

	withLength := func(n uint64) []byte {
		b := append([]byte(nil), good...)
		binary.BigEndian.PutUint64(b[len(snapshotMagic)+1:], n)
		return b
	}
	flip := func(i int) []byte {
		b := append([]byte(nil), good...)
		b[i] ^= 1
		return b
	}
	tests := []struct {
		name string
		data []byte
		want string // substring of the error; empty means success
	}{
		{"valid", good, ""},
		{"empty payload", framed(t, nil), ""},
		{"empty input", nil, "header: unexpected EOF"},
		{"header cut one byte short", good[:headerLen-1], "header: unexpected EOF"},
		{"header only", good[:headerLen], "payload of 26 bytes: unexpected EOF"},
		{"payload cut one byte short", good[:headerLen+len(payload)-1], "payload of 26 bytes: unexpected EOF"},
		{"no checksum", good[:headerLen+len(payload)], "checksum: unexpected EOF"},
		{"checksum cut one byte short", good[:len(good)-1], "checksum: unexpected EOF"},
		{"trailing byte", append(append([]byte(nil), good...), 0), "unexpected bytes after the checksum"},
		{"bad magic", flip(0), `magic "osplcat" is not "nsplcat"`},
		{"future version", func() []byte {
			b := append([]byte(nil), good...)
			b[len(snapshotMagic)] = snapshotVersion + 1
			return b
		}(), "format version 4 is not supported"},
		{"version 0", func() []byte { b := append([]byte(nil), good...); b[len(snapshotMagic)] = 0; return b }(), "format version 0 is not supported"},
		{"corrupt payload", flip(headerLen), "checksum"},
		{"corrupt checksum", flip(len(good) - 1), "does not match"},
		{"length at the limit", withLength(MaxSnapshotBytes), "unexpected EOF"},
		{"length over the limit", withLength(MaxSnapshotBytes + 1), "exceeds the limit of 1073741824 bytes"},
		{"length far over the limit", withLength(1<<64 - 1), "exceeds the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			version, got, err := readSnapshot(bytes.NewReader(tt.data))
			if tt.want == "" {
				require.NoError(t, err)
				require.Equal(t, byte(snapshotVersion), version)
				require.Equal(t, tt.data[headerLen:len(tt.data)-4], got)
				return
			}
			require.ErrorIs(t, err, ErrSnapshot)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after == 0 {
		return 0, errors.New("disk full")
	}
	w.after--
	return len(p), nil
}

func TestSnapshotWriteErrors(t *testing.T) {
	for after := range 3 {
		err := writeSnapshot(&failingWriter{after: after}, []byte("x"))
		require.ErrorContains(t, err, "catalog: write snapshot: disk full")
	}
}

// FuzzReadSnapshot checks that framing never panics, accepts exactly what
// writeSnapshot produces, and re-frames an accepted payload byte for byte.
func FuzzReadSnapshot(f *testing.F) {
	f.Add(framed(f, []byte(`{"version":1}`)))
	f.Add(framed(f, nil))
	f.Add([]byte(snapshotMagic + "\x01"))
	f.Add(framed(f, []byte("x"))[:headerLen+1])
	var v1 bytes.Buffer
	require.NoError(f, writeFrame(&v1, snapshotV1, []byte(`{"version":1}`)))
	f.Add(v1.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		version, payload, err := readSnapshot(bytes.NewReader(data))
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			return
		}
		var again bytes.Buffer
		require.NoError(t, writeFrame(&again, version, payload))
		require.Equal(t, data, again.Bytes())
	})
}

var _ io.Writer = (*failingWriter)(nil)
