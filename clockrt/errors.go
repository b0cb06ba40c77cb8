package clockrt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nspl-dev/nspl/wire"
)

// Errors reported by the node runtime. Callers match them with errors.Is;
// every error the package returns is a *ClockError that wraps one of them
// (and, where there is one, the underlying cause).
//
// ErrClockUnavailable is the umbrella for every outcome in which the bound
// clock cannot be used any more: a *ClockError wrapping ErrDomainMissing,
// ErrDomainStopped, ErrClockUninstalled, ErrStaleGeneration or
// ErrForeignDeadline also matches ErrClockUnavailable.
var (
	// ErrDomainMissing: the domain is not installed in this node's runtime,
	// either because the catalog lacks it or because it was removed.
	ErrDomainMissing = wire.NewSentinel("domain_missing", "domain is not installed on this node; check the name or create the domain")
	// ErrDomainStopped: the domain is stopped and has no readable clock.
	ErrDomainStopped = wire.NewSentinel("domain_stopped", "domain is stopped; START it before using its clock")
	// ErrClockUninstalled: the domain is running but this node has not
	// installed its paced mapping and authority.
	ErrClockUninstalled = errors.New("domain clock is not installed on this node; retry once its mapping and authority are installed")
	// ErrStaleGeneration: the handle was bound to a generation that a later
	// START replaced.
	ErrStaleGeneration = errors.New("clock handle is bound to a replaced generation; bind the domain again")
	// ErrForeignDeadline: the deadline was created for another domain or
	// generation (or by another time source) than the one waiting for it.
	ErrForeignDeadline = errors.New("deadline belongs to another domain, generation or time source; create it from the clock that waits for it")
	// ErrClockUnavailable matches every unavailability outcome listed above.
	ErrClockUnavailable = wire.NewSentinel("clock_unavailable", "domain clock is unavailable")
	// ErrWaitCancelled: the wait's context ended before the deadline was
	// reached. The *ClockError also wraps the context's error.
	ErrWaitCancelled = errors.New("wait for the deadline was cancelled")
	// ErrCannotSchedule: a logical delta has no physical wait that fits
	// unsigned 64-bit nanoseconds at the installed rate: the remaining wait
	// of a deadline, or the tick producer's wait for its next boundary or
	// its spacing of one period (the producer then stops).
	ErrCannotSchedule = wire.NewSentinel("cannot_schedule", "logical wait cannot be scheduled as a physical wait at this rate; choose a nearer target or a higher time rate")
	// ErrClockOverflow: projecting the current UTC through the installed
	// mapping leaves signed Unix nanoseconds.
	ErrClockOverflow = wire.NewSentinel("clock_overflow", "domain clock projection falls outside the signed Unix-nanosecond range; START the domain with a representable origin and rate")
	// ErrTickOverflow: the latest due or the next tick of the installed
	// mapping has no id or boundary in range (unsigned 64-bit ids, signed
	// Unix nanoseconds), so no further tick of the generation can be
	// produced.
	ErrTickOverflow = wire.NewSentinel("tick_overflow", "domain clock tick leaves the range of tick ids and signed Unix-nanosecond boundaries; START the domain with an earlier origin or another period")
	// ErrInvalidLifecycle: an installation request is inconsistent.
	ErrInvalidLifecycle = errors.New("invalid lifecycle installation")
	// ErrOlderRevision: an installation request comes from an older catalog
	// revision than the one the domain already holds; it is ignored.
	ErrOlderRevision = errors.New("lifecycle comes from an older catalog revision than the installed one; apply revisions in commit order")
	// ErrProgressFence: a progress report does not match the installed
	// generation, authority revision, authority identity or authenticated
	// reporting node; it is ignored.
	ErrProgressFence = errors.New("progress report does not match the installed clock authority; it is ignored")
	// ErrInvalidProgress: a progress report is malformed (tick id zero).
	ErrInvalidProgress = errors.New("progress report is malformed; tick ids are one-based")
	// ErrImplausibleProgress: a progress report matches the installed fence
	// but not the installed mapping, or claims a tick or UTC further ahead
	// of this node's clock than the max clock offset allows; it is ignored.
	// Check the authority's clock (or raise the max clock offset).
	ErrImplausibleProgress = errors.New("progress report is implausible for the installed mapping and this node's clock; it is ignored")
)

// ClockError is the error type of package clockrt. It names the domain and,
// where one is involved, the generation, and wraps a sentinel from the
// package's var block plus an optional cause (a context error or an
// arithmetic error from package clock).
type ClockError struct {
	// Op is what failed: "bind", "read", "wait", "install", "remove".
	Op string
	// Domain is the domain's name.
	Domain string
	// Generation is the generation involved; zero when none is.
	Generation uint64
	// Err is one of the package's sentinel errors.
	Err error
	// Cause is the underlying error, or nil.
	Cause error
	// Detail adds context, such as which field of a lifecycle is invalid.
	Detail string
}

// Error formats the operation, the quoted domain, the generation and the
// sentinel's advice.
func (e *ClockError) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Domain != "" {
		fmt.Fprintf(&b, " domain %q", e.Domain)
	}
	if e.Generation != 0 {
		fmt.Fprintf(&b, " generation %d", e.Generation)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Cause != nil {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

// Unwrap returns the sentinel and, if present, the cause.
func (e *ClockError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// Is reports whether target is ErrClockUnavailable and e is one of the
// unavailability outcomes.
func (e *ClockError) Is(target error) bool {
	if target != ErrClockUnavailable {
		return false
	}
	switch e.Err {
	case ErrDomainMissing, ErrDomainStopped, ErrClockUninstalled, ErrStaleGeneration, ErrForeignDeadline:
		return true
	}
	return false
}

// Sentinels returns the package's coded sentinels, for the module's one
// code table.
func Sentinels() []error {
	return []error{ErrDomainMissing, ErrDomainStopped, ErrClockUnavailable, ErrClockOverflow, ErrTickOverflow, ErrCannotSchedule}
}
