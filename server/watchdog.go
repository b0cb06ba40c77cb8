package server

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// watchdog ends a session whose client falls silent or sends a message too
// slowly. It keeps two timers of the server's time source: the idle timer,
// armed from the end of each message for Limits.SessionIdleTimeout, and the
// message timer, armed at the first byte of a message for
// Limits.MessageTimeout and stopped at its newline. Only the stream's
// reader moves them (messageStarted, messageEnded); run, on its own
// goroutine, waits for them and checks, under mu, that a firing is still
// due before it reports it, so a firing that crossed a Reset is ignored.
type watchdog struct {
	src     timesource.Source
	idle    time.Duration
	message time.Duration
	idleT   timesource.Timer
	msgT    timesource.Timer

	mu        sync.Mutex
	inMessage bool
	lastEnd   time.Duration // monotonic end of the last message, or the start
	started   time.Duration // monotonic first byte of the message in progress
}

// newWatchdog arms the idle timer; the message timer waits for a first
// byte.
func newWatchdog(src timesource.Source, l Limits) *watchdog {
	w := &watchdog{src: src, idle: l.SessionIdleTimeout, message: l.MessageTimeout}
	w.msgT = src.NewTimer(l.MessageTimeout)
	w.msgT.Stop()
	w.lastEnd = src.Monotonic()
	w.idleT = src.NewTimer(l.SessionIdleTimeout)
	return w
}

// messageStarted notes that bytes of a message arrived; the first call of a
// message arms the message timer.
func (w *watchdog) messageStarted() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inMessage {
		return
	}
	w.inMessage, w.started = true, w.src.Monotonic()
	w.msgT.Reset(w.message)
}

// messageEnded notes a whole message: the idle timer starts again and the
// message timer stops, or, when more of the next message is already
// buffered (pending), starts again for that one.
func (w *watchdog) messageEnded(pending bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.src.Monotonic()
	w.inMessage, w.lastEnd = false, now
	w.idleT.Reset(w.idle)
	if pending {
		w.inMessage, w.started = true, now
		w.msgT.Reset(w.message)
		return
	}
	w.msgT.Stop()
}

// run waits until the session is idle too long (ErrSessionIdle) or a message
// takes too long (ErrMessageTimeout), or ctx ends (nil).
func (w *watchdog) run(ctx context.Context) error {
	for {
		select {
		case <-w.idleT.C():
			w.mu.Lock()
			due := !w.inMessage && w.src.Monotonic()-w.lastEnd >= w.idle
			w.mu.Unlock()
			if due {
				return ErrSessionIdle
			}
		case <-w.msgT.C():
			w.mu.Lock()
			due := w.inMessage && w.src.Monotonic()-w.started >= w.message
			w.mu.Unlock()
			if due {
				return ErrMessageTimeout
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// stop disarms both timers once run has returned.
func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.idleT.Stop()
	w.msgT.Stop()
}

// watchedBody tells the watchdog when bytes other than blank space arrive.
type watchedBody struct {
	r io.Reader
	w *watchdog
}

func (b watchedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 && len(bytes.TrimSpace(p[:n])) > 0 {
		b.w.messageStarted()
	}
	return n, err
}
