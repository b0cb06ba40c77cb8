// Package record holds the plain values of the replicated vocabulary: a
// domain's record (Domain) and its parts (Pace, Placement, Status,
// StartPoint, AuthorityFence, Identity), a START as the operator wrote it
// (StartRequest), and the typed refusal of a lifecycle transition (Error,
// its Code and the sentinel each code unwraps to). Each value encodes as
// text or JSON and decodes from exactly the spelling it encodes to.
//
// It is split out of package lifecycle, which ../shared/DESIGN.md draws as
// one layer ("the replicated vocabulary and its pure transitions"), because
// the two halves have different readers. The transitions (Apply, the start
// and authority resolution, snapshots, restores, the command codec) serve a
// catalog; the values are also read on the client side, where the planner
// turns a statement into a CREATE's pace and placement or a START request,
// a backup archive records domains, and package follow rebuilds a refusal
// a server sent. Holding the values here lets the remote client name them
// while linking no transition, no catalog and no node. Package lifecycle
// aliases every type, constant and sentinel of this package, so the
// server side keeps one vocabulary under either name and errors.Is matches
// through both.
//
// The invariants that relate the fields of a Domain, and every transition
// that keeps them, are package lifecycle's: this package defines no
// behaviour beyond naming, printing and encoding its values. Of this module
// it imports only package clock (a StartPoint's mapping), and it must never
// import anything that applies, stores or serves state.
package record
