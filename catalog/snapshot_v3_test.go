package catalog

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

// TestFSMRestoresEveryVersion restores the same catalog and request window
// from a snapshot in each format this build reads: the version 2 JSON that
// earlier builds wrote and the version 3 written now, whose state is
// lifecycle's binary snapshot. Both restore to equal states and windows.
func TestFSMRestoresEveryVersion(t *testing.T) {
	src := NewFSM(quietLogger(t), nil)
	cmds := scenario()
	for i := range cmds {
		cmds[i].RequestID = fmt.Sprintf("r-%d", i)
	}
	src.ApplyBatch(logs(t, 1, cmds...))
	reqs := src.requests.entries()
	require.NotEmpty(t, reqs)

	state, err := src.State().MarshalSnapshot()
	require.NoError(t, err)
	v2, err := json.Marshal(snapshotPayload{State: state, Requests: reqs})
	require.NoError(t, err)
	v3, err := encodeSnapshot(src.State(), reqs)
	require.NoError(t, err)
	bin, err := src.State().MarshalSnapshotBinary()
	require.NoError(t, err)
	require.Equal(t, bin, v3[len(binary.AppendUvarint(nil, uint64(len(bin)))):][:len(bin)], "version 3 holds the binary state")

	for _, tc := range []struct {
		version byte
		payload []byte
	}{{snapshotV2, v2}, {snapshotVersion, v3}} {
		t.Run(fmt.Sprint("version ", tc.version), func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, writeFrame(&b, tc.version, tc.payload))
			dst := NewFSM(quietLogger(t), nil)
			require.NoError(t, dst.Restore(io.NopCloser(&b)))
			requireSameState(t, src.State(), dst.State())
			require.Equal(t, reqs, dst.requests.entries())
		})
	}
}

// TestFSMRestoreRefusesBadVersion3 covers the version 3 payloads a snapshot
// never holds.
func TestFSMRestoreRefusesBadVersion3(t *testing.T) {
	bin, err := lifecycle.NewState().MarshalSnapshotBinary()
	require.NoError(t, err)
	prefix := binary.AppendUvarint(nil, uint64(len(bin)))
	good := append(append(append([]byte(nil), prefix...), bin...), "[]"...)
	tests := []struct {
		name    string
		payload []byte
		msg     string
	}{
		{"empty", nil, "does not hold the state length"},
		{"length past the end", append(binary.AppendUvarint(nil, uint64(len(bin)+3)), bin...), "does not hold the state length"},
		{"no window", append(append([]byte(nil), prefix...), bin...), "request window does not decode"},
		{"null window", append(append(append([]byte(nil), prefix...), bin...), "null"...), "no request window"},
		{"trailing data", append(append([]byte(nil), good...), " {}"...), "trailing data"},
		{"state not a snapshot", append(append([]byte{1}, 'x'), "[]"...), "lifecycle snapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, writeFrame(&b, snapshotVersion, tt.payload))
			err := NewFSM(quietLogger(t), nil).Restore(io.NopCloser(&b))
			require.ErrorIs(t, err, ErrSnapshot)
			require.ErrorContains(t, err, tt.msg)
		})
	}
	var b bytes.Buffer
	require.NoError(t, writeFrame(&b, snapshotVersion, good))
	require.NoError(t, NewFSM(quietLogger(t), nil).Restore(io.NopCloser(&b)), "the unmutated payload restores")
}
