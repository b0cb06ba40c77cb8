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
// The package performs no I/O and never reads the wall clock; callers pass
// every instant in. It is shared by the node runtime and the embedded client
// API, so a client projects exactly what a node projects.
package clock
