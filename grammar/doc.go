// Package grammar is the NSPL lexer and parser for the domain statements.
//
// Literal conversion happens here, once, at the language boundary:
// durations become unsigned 64-bit nanoseconds, RFC 3339 text becomes signed
// Unix nanoseconds and TIME RATE a positive finite float64. Out-of-range text
// is a typed error with its position, never a panic and never a silent wrap.
package grammar
