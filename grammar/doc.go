// Package grammar is the NSPL lexer and parser for the domain statements.
//
// Parse turns source text into statements (ast.go) whose every node carries
// its position (byte offset, line, column). Errors are *Error values that
// print "LINE:COL: message", say what was expected and what was found
// ("expected PERIOD, found SKEW"), and unwrap to one of the sentinels in
// errors.go.
//
// Literal conversion happens here, once, at the language boundary:
// durations become unsigned 64-bit nanoseconds (ParseDuration), RFC 3339
// text becomes signed Unix nanoseconds (ParseTimestamp) and TIME RATE a
// positive finite float64 (ParseRate). Out-of-range text is a typed error
// with its position, never a panic and never a silent wrap; nothing
// downstream re-parses text. The Format* functions print the canonical text
// the planner uses, and each reads back exactly. Format (format.go) lays out
// a whole script canonically for nspl fmt, keeping its comments where they
// were; its result parses to the same statements.
//
// The lexer is hand-written (lexer.go) and plugged into participle v2 as its
// lexer.Definition; participle's regular-expression lexer is far too slow.
// Keywords are case-insensitive and reserved: a domain named like a keyword
// is written in backticks. The grammar is LL(1), so what may come next at
// any point is found by asking the parser (expect.go); syntax errors and the
// shell support (Complete, Split, Suggest, NextKeywords) share
// that one source of truth. To add a statement, extend keywords.go, the
// rules in parser.go (and its first keyword in productions), ast.go and
// build.go.
//
// Parse lexes a script once, straight into one participle lexer, and parses
// each statement from it with the production its first keyword selects,
// starting after that keyword (a statement that is its keyword alone needs
// no parse); the leaves of the grammar (names, durations, strings, rates,
// placements, each with the keywords that introduce it) are participle
// custom productions (leaves.go), and productions hold their parts by value
// and capture only what build reads. All of this only spares participle
// work it would otherwise allocate for: participle's descent still parses
// every statement's structure. A statement that fails there is parsed again
// on its own with the whole grammar, and that error is the one reported, so
// errors read the same either way.
//
// Split (shell.go) cuts a text once into statements with their source
// spans, lexing only: the shell, the script runner, history and the remote
// client consume that one cut, a statement is told by its keywords
// (StatementSource.Keywords) where a consumer needs to know which it is,
// and a position a parse of one statement reports is mapped to the whole
// text by StatementSource.Locate, so each side parses a statement once
// (Parses counts, for the tests that hold it).
//
// The package must never print, log or read the clock: it is pure text to
// values. It imports no package of this module but literal, the printer
// of names and literals (and the keyword list) it shares with wire: the
// keywords a statement carries as values (Pace, Placement) are its own enums, which the planner
// converts to the replicated vocabulary.
package grammar
