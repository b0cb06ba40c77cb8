// Package lifecycle is the replicated vocabulary of domains and their clocks,
// and the pure transitions over it: create, alter placement, drop, start
// resolution, stop, authority selection, compare-and-set reassignment and
// the all-or-nothing restore of archived domains.
//
// The replicated catalog is a State changed only by State.Apply of a
// Command. Commands are encoded (EncodeCommand, DecodeCommand) in a compact
// binary format with a leading format byte; older formats still decode, so
// logs written by earlier builds replay. A command carries resolved values:
// the command handler first calls ResolveStart or ResolveTransaction with its
// sampled UTC instant and the live voter incarnations, and the leader's
// reconciliation calls Reconcile, which proposes compare-and-set
// ReassignAuthority commands. Every change advances the catalog revision by
// one; no-ops and refusals do not. Refusals are *Error values carried in the
// Result, whose Code survives encoding and unwraps to one of the package's
// sentinel errors.
//
// Every function takes all of its inputs as arguments, including the sampled
// UTC anchor and the live voter set, so the same inputs always give the same
// result. The package must never read the wall clock, generate randomness,
// perform I/O or depend on raft: nondeterminism is resolved by the caller
// before a command is proposed. Of this module it imports only package
// clock and package record, which holds the plain values of this
// vocabulary (Domain, Pace, Placement, StartRequest, Error, …) so that the
// client side can name them without linking the transitions; this package
// aliases each of them (record.go), so both names denote one type.
package lifecycle
