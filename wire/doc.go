// Package wire is the vocabulary nodes, servers and remote clients speak:
// values, result sets, results, frames, ticks, observed clocks and cluster
// status; the session protocol's messages, paths, limits and line framing,
// encoded and decoded; the coded sentinels and the one remote error, the
// JSON string escaper, and the protocol's own sentinels. It imports clock
// and nothing else of this module, so a remote client links it without
// linking a raft node.
//
// Error codes travel with the sentinels, not in a registry. Each sentinel
// a peer may refuse with is declared with its stable code (NewSentinel, in
// its own package's var block), so encoding a failure is finding the first
// Coded error in its chain (CodeOf). A received code decodes to a
// *RemoteError (or a *ClockFailure) that matches with errors.Is the
// sentinel carrying that code, whichever package declares it, because the
// match compares codes (RemoteError.Is): no table is consulted on either
// side and nothing is registered at import time, so what decodes does not
// depend on which packages a process happened to link or in which order
// they initialised. Wire cannot import the packages whose sentinels travel
// (catalog links raft; grammar and record may import nothing of ours but
// clock), and defining every sentinel here would move each package's
// errors away from the code that returns them; grammar and record, which
// may not import wire, implement the one ErrorCode method themselves. An
// older spelling of a code is the sentinel's alias, accepted on decode and
// never sent (catalog's "timeout" for "catalog_timeout").
//
// The one code table is built from the Sentinels list each package exports,
// in one place, the root package's TestOneCodeTable, which holds that no
// two sentinels of the module share a code and that the codes stay the
// committed ones: two that shared one would match each other's remote
// failures, and a renamed one would leave older peers matching nothing.
//
// Wire never formats for operators (session renders values and frames as
// NSPL text) and never carries a statement's positioned error itself:
// follow.StatementError is that error, and follow.EncodeError and
// DecodeError translate it, a lifecycle refusal's *record.Error whole.
package wire
