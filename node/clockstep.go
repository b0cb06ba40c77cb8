package node

import (
	"log/slog"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// stepWatch notices this node's UTC stepped forward against its monotonic
// clock, and keeps the clock suspect until a peer vouches for it.
//
// An authority whose UTC jumps ahead (an operator or a time daemon stepping
// it) projects its ticks from the stepped clock: it would hand its own
// clients tick ids that real time has not reached yet. Its peers refuse
// those reports as implausible (Config.MaxClockOffset), but its own clients
// would see them, and once the authority moves (it is killed, cut off, or
// cordoned) its successor produces the same ids from an honest clock, so
// one generation and id would carry two readings. While the clock is
// suspect the node's producers therefore deliver nothing locally: each
// report goes to the peers alone, and the first a peer accepts whose
// authority reading is no earlier than the suspect reading proves the clock
// plausible again (confirm). A step back needs no such care: tick ids never
// go back, so the producer is silent until its projection passes the newest
// id it emitted.
//
// A step is a change of UTC minus monotonic time between two looks of more
// than the tolerance, half the max clock offset: far more than a time
// daemon's slew moves it between two ticks.
type stepWatch struct {
	src       timesource.Source
	tolerance time.Duration
	logger    *slog.Logger

	mu      sync.Mutex
	primed  bool
	offset  int64 // UTC minus monotonic at the last look
	suspect int64 // UTC of the look that saw the step; 0: not suspect
}

func newStepWatch(src timesource.Source, maxOffset time.Duration, logger *slog.Logger) *stepWatch {
	return &stepWatch{src: src, tolerance: maxOffset / 2, logger: logger}
}

// look reads the clock and reports whether it is suspect: it stepped
// forward by more than the tolerance since an earlier look, and no peer has
// confirmed it since.
func (w *stepWatch) look() bool {
	r := w.src.Paired()
	offset := r.Wall - int64(r.Mono)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.primed && offset-w.offset > int64(w.tolerance) {
		if w.suspect == 0 {
			w.logger.Warn("this node's UTC stepped forward: its ticks reach only its peers until one of them accepts one, so its own clients see no tick it produced ahead of real time",
				"step", time.Duration(offset-w.offset), "tolerance", w.tolerance)
		}
		w.suspect = max(r.Wall, 1)
	}
	w.primed, w.offset = true, offset
	return w.suspect != 0
}

// confirm records that a peer accepted a report of this node whose
// authority reading was authorityUTC: a reading no earlier than the
// suspect one ends the suspicion. It reports whether it did.
func (w *stepWatch) confirm(authorityUTC int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.suspect == 0 || authorityUTC < w.suspect {
		return false
	}
	w.suspect = 0
	w.logger.Info("a peer accepted this node's ticks again: its clients see them again")
	return true
}
