// Package planner turns parsed NSPL statements into typed plans: plain Go
// values with no parser types in them. Checks that need no state (PERIOD
// must be positive, …) live here. Every plan prints back as canonical NSPL,
// and parsing that text gives the same plan.
//
// Plan is the interface every plan type satisfies, so the function that
// plans one statement is PlanStatement; PlanScript parses and plans a whole
// script. Errors are *grammar.Error values, so a script runner prints
// positions the same way whichever stage refused the text. Each plan keeps
// the position of its statement in its embedded Located; positions are not
// part of a plan's meaning.
//
// The grammar's keyword enums (grammar.Pace, grammar.Placement) become
// the replicated vocabulary's (package record) here, in vocab.go, and
// nowhere else; so does a START plan's StartMode (Start.Request, the
// request node resolves). The package never touches
// state, the clock or I/O.
package planner
