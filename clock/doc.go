// Package clock is the pure arithmetic of domain clocks: paced projection
// (rounding down), the inverse physical wait (rounding up), one-based tick
// boundaries and admission windows.
//
// Every operation is exact for every positive finite float64 rate: a float64
// is m×2^e, so projection and its inverse use 128-bit integer arithmetic
// (math/bits) rather than a rounded float product. Results that leave signed
// Unix nanoseconds (timestamps) or unsigned 64-bit nanoseconds (durations)
// are typed overflow errors; nothing wraps or saturates silently.
//
// The pieces:
//
//   - Mapping.Project gives logical time at a UTC observation and
//     Mapping.Wait / Mapping.WaitDelta the physical nanoseconds until a
//     logical target; Mapping.WallAt is the earliest UTC instant that
//     reaches a target.
//   - TickBoundary, LatestDueTick and NextTick place one-based ticks on the
//     logical axis by direct arithmetic, so a late producer coalesces to the
//     newest due tick and never loops over missed ones.
//   - NewWindow reconstructs the admission window (the newest 256 reached
//     centers and their inclusive skew) from the mapping alone; Window.Admit
//     tests one event and Window.AdmitBatch a column of events into a bitmap,
//     with the period reduction prepared once per window.
//
// The package performs no I/O and never reads the wall clock; callers pass
// every instant in. It is a leaf: it imports no package of this module, so
// the node runtime, the replicated lifecycle vocabulary, the embedded API and
// the remote client share it and a client projects exactly what a node
// projects. Do not use it to
// read a domain's time: a read must go through a generation-bound handle of
// the runtime, which validates the installation and keeps reads monotonic
// with its watermark; this package knows nothing of generations.
package clock
