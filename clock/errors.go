package clock

import (
	"errors"
	"fmt"
)

// Sentinel errors returned (wrapped) by this package. Match them with
// errors.Is; every returned error carries the offending input in its message.
var (
	// ErrOverflow reports a result that leaves its representable range:
	// signed Unix nanoseconds for timestamps, unsigned 64-bit nanoseconds for
	// durations, or unsigned 64-bit tick ids. Errors that wrap it are
	// *OverflowError values naming the operation.
	ErrOverflow = errors.New("clock: result out of range")
	// ErrInvalidRate reports a time rate that is not a positive finite
	// float64 (zero, negative, NaN or infinite).
	ErrInvalidRate = errors.New("clock: invalid time rate")
	// ErrInvalidPeriod reports a tick period of zero nanoseconds.
	ErrInvalidPeriod = errors.New("clock: invalid period")
	// ErrInvalidTick reports tick id zero; tick ids are one-based.
	ErrInvalidTick = errors.New("clock: invalid tick id")
	// ErrNotReadable reports an observed clock that has no readable time:
	// stopped or uninstalled, or unpaced where a paced mapping is needed
	// (an admission window).
	ErrNotReadable = errors.New("clock: observed clock is not readable")
)

// OverflowError reports that an operation's exact result does not fit the
// range its result type represents. It matches ErrOverflow under errors.Is.
type OverflowError struct {
	// Op names the operation, for example "project" or "wait".
	Op string
	// Range names the range the result left, for example
	// "signed unix nanoseconds".
	Range string
	// Input describes the operands that produced the result.
	Input string
}

// Ranges named by OverflowError.Range.
const (
	RangeTimestamp = "signed unix nanoseconds"
	RangeDuration  = "unsigned 64-bit nanoseconds"
	RangeTickID    = "unsigned 64-bit tick ids"
)

// Error implements error.
func (e *OverflowError) Error() string {
	return fmt.Sprintf("clock: %s: result of %s leaves %s; %s", e.Op, e.Input, e.Range, overflowHint(e.Op))
}

func overflowHint(op string) string {
	switch op {
	case "project":
		return "use an earlier logical start or a lower time rate"
	case "wait", "wall at":
		return "use a nearer logical target or a higher time rate"
	case "tick boundary":
		return "use a smaller tick id or period"
	case "latest due tick":
		return "use a period of at least 2ns"
	case "next tick":
		return "no later tick exists; use an earlier origin or a smaller period"
	default:
		return "use operands closer to the origin"
	}
}

// Is reports whether target is ErrOverflow.
func (e *OverflowError) Is(target error) bool { return target == ErrOverflow }

// Unwrap returns ErrOverflow.
func (e *OverflowError) Unwrap() error { return ErrOverflow }

func overflow(op, rng, format string, args ...any) error {
	return &OverflowError{Op: op, Range: rng, Input: fmt.Sprintf(format, args...)}
}

func invalidRate(rate float64) error {
	return fmt.Errorf("%w %q: time rate must be a positive finite number such as 1 or 0.5",
		ErrInvalidRate, formatRate(rate))
}

func invalidPeriod(op string) error {
	return fmt.Errorf("%w: %s: period 0ns is not allowed; use a period of at least 1ns", ErrInvalidPeriod, op)
}

func errInvalidTick() error {
	return fmt.Errorf("%w %q: tick ids are one-based; use 1 for the origin", ErrInvalidTick, "0")
}
