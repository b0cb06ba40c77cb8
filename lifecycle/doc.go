// Package lifecycle is the replicated vocabulary of domains and their clocks,
// and the pure transitions over it: create, alter placement, drop, start
// resolution, stop, authority selection and compare-and-set reassignment.
//
// Every function takes all of its inputs as arguments, including the sampled
// UTC anchor and the live voter set, so the same inputs always give the same
// result. The package must never read the wall clock, generate randomness,
// perform I/O or depend on raft: nondeterminism is resolved by the caller
// before a command is proposed.
package lifecycle
