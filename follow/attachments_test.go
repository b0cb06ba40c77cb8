package follow

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/wire"
)

func TestAttachmentsAdmitHeldFramesOnly(t *testing.T) {
	var a Attachments
	frame := func(d string, id uint64, k wire.FrameKind) wire.Frame {
		return wire.Frame{Domain: d, Attachment: id, Kind: k}
	}
	require.False(t, a.Admits(frame("a", 1, wire.FrameTick)), "the zero value holds nothing")
	a.Attached("a", 1)
	a.Attached("b", 2)
	a.Attached("c", 3)
	for _, tc := range []struct {
		name  string
		f     wire.Frame
		admit bool
	}{
		{"held tick", frame("a", 1, wire.FrameTick), true},
		{"another attachment", frame("a", 9, wire.FrameTick), false},
		{"unattached domain", frame("z", 1, wire.FrameState), false},
		{"held end", frame("a", 1, wire.FrameEnd), true},
		{"after its end", frame("a", 1, wire.FrameTick), false},
		{"held state", frame("b", 2, wire.FrameState), true},
	} {
		require.Equal(t, tc.admit, a.Admits(tc.f), tc.name)
	}
	a.Released("b")
	require.False(t, a.Admits(frame("b", 2, wire.FrameTick)), "released")
}
