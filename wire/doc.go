// Package wire is the vocabulary nodes, servers and remote clients speak:
// values, result sets, results, frames, ticks, observed clocks and cluster
// status; the session protocol's messages, paths, limits and line framing,
// encoded and decoded; the one error-code table, the one remote error, the
// JSON string escaper, and the protocol's own sentinels. It imports clock
// and nothing else of this module, so a remote client links it without
// linking a raft node.
//
// The error-code table maps a stable code to the sentinel a receiver
// unwraps to. Wire cannot import the packages whose sentinels it maps
// (catalog links raft; grammar and lifecycle may import nothing of ours),
// and defining every sentinel here would move each package's errors away
// from the code that returns them. So the owning package registers its
// codes from an init function (RegisterCode), and the few leaf packages
// that may not import wire have theirs registered by the one package that
// sends them: session for grammar and planner, interconnect for lifecycle.
// Registration happens only during initialisation, so lookups are
// lock-free; a receiver that has not linked a sentinel's package cannot
// name that sentinel either, and sees a *RemoteError with its code.
//
// Wire never formats for operators (session renders values and frames as
// NSPL text) and never carries a statement's positioned error as a
// *grammar.Error: follow.EncodeError and DecodeError translate that.
package wire
