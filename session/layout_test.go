package session

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A tick touches few cache lines: what the fan-out and the reader read of
// an attachment lies in its first two lines, what they read of a lane in
// its first and its entries in its second, the lane is the first field of its session, and the records
// of attachments and sessions fill size classes whose objects start on a
// line (multiples of 64 bytes: the attachment's 256, the session's 448), so
// the offsets are the lines. A field added before them, or a record grown
// past its class, fails here first.
func TestTickLayout(t *testing.T) {
	const line = 64
	var a attachment
	var l lane
	var s Session
	end := func(off, size uintptr) uintptr { return off + size }
	for _, tc := range []struct {
		what     string
		from, to uintptr // the field lies in [from, to)
		off, end uintptr
	}{
		{"attachment.mu", 0, line, unsafe.Offsetof(a.mu), end(unsafe.Offsetof(a.mu), unsafe.Sizeof(a.mu))},
		{"attachment.busy", 0, line, unsafe.Offsetof(a.busy), end(unsafe.Offsetof(a.busy), 1)},
		{"attachment.tickRoom", 0, line, unsafe.Offsetof(a.tickRoom), end(unsafe.Offsetof(a.tickRoom), 4)},
		{"attachment.lastTick", 0, line, unsafe.Offsetof(a.lastTick), end(unsafe.Offsetof(a.lastTick), 8)},
		{"attachment.failed", 0, line, unsafe.Offsetof(a.failed), end(unsafe.Offsetof(a.failed), 8)},
		{"attachment.last", 0, 2 * line, unsafe.Offsetof(a.last), end(unsafe.Offsetof(a.last), unsafe.Sizeof(a.last))},
		{"attachment.lane", 0, 2 * line, unsafe.Offsetof(a.lane), end(unsafe.Offsetof(a.lane), 8)},
		{"attachment.slot", line, 2 * line, unsafe.Offsetof(a.slot), end(unsafe.Offsetof(a.slot), 8)},
		{"attachment.id", line, 2 * line, unsafe.Offsetof(a.id), end(unsafe.Offsetof(a.id), 8)},
		{"attachment.domain", line, 2 * line, unsafe.Offsetof(a.domain), end(unsafe.Offsetof(a.domain), unsafe.Sizeof(a.domain))},
		{"lane.mu", 0, line, unsafe.Offsetof(l.mu), end(unsafe.Offsetof(l.mu), unsafe.Sizeof(l.mu))},
		{"lane.closed", 0, line, unsafe.Offsetof(l.closed), end(unsafe.Offsetof(l.closed), 1)},
		{"lane.wantChange", 0, line, unsafe.Offsetof(l.wantChange), end(unsafe.Offsetof(l.wantChange), 1)},
		{"lane.readyWaiters", 0, line, unsafe.Offsetof(l.readyWaiters), end(unsafe.Offsetof(l.readyWaiters), 4)},
		{"lane.watchWaiters", 0, line, unsafe.Offsetof(l.watchWaiters), end(unsafe.Offsetof(l.watchWaiters), 4)},
		{"lane.head", 0, line, unsafe.Offsetof(l.head), end(unsafe.Offsetof(l.head), 4)},
		{"lane.entries", 0, line, unsafe.Offsetof(l.entries), end(unsafe.Offsetof(l.entries), unsafe.Sizeof(l.entries))},
		{"lane.ready", 0, line, unsafe.Offsetof(l.ready), end(unsafe.Offsetof(l.ready), 8)},
		{"lane.inline", line, 2 * line, unsafe.Offsetof(l.inline), end(unsafe.Offsetof(l.inline), unsafe.Sizeof(l.inline))},
		{"lane.watchDone", 0, line, unsafe.Offsetof(l.watchDone), end(unsafe.Offsetof(l.watchDone), 8)},
		{"Session.lane", 0, 0, unsafe.Offsetof(s.lane), unsafe.Offsetof(s.lane)},
	} {
		require.GreaterOrEqual(t, tc.off, tc.from, "%s starts at byte %d", tc.what, tc.off)
		require.LessOrEqual(t, tc.end, max(tc.to, tc.from), "%s ends at byte %d", tc.what, tc.end)
	}
	for _, tc := range []struct {
		what        string
		size        uintptr
		above, upTo uintptr // the size class holds (above, upTo]
	}{
		{"attachment", unsafe.Sizeof(a), 240, 256},
		{"Session", unsafe.Sizeof(s), 416, 448},
	} {
		require.Greater(t, tc.size, tc.above, "%s is %d bytes, in a smaller class", tc.what, tc.size)
		require.LessOrEqual(t, tc.size, tc.upTo, "%s is %d bytes, past its class", tc.what, tc.size)
	}
}
