package wire

import (
	"math"
	"strconv"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/literal"
)

// Result is the reply to one statement.
//
// Message is the one-line outcome every statement has ("created domain
// 'prod'", "queued STOP (2 pending)"). Set is the typed result set of LIST
// DOMAINS and DESCRIBE DOMAIN and nil otherwise. Clock is the observed clock
// an ATTACH DOMAIN CLOCK reply carries, and Attachment that attachment's
// number within the session, the number its frames carry.
type Result struct {
	// Statement is the canonical NSPL text of the statement that ran.
	Statement string
	// Message is the operator-facing outcome.
	Message string
	// Domain is the domain the statement acted on, when it acted on one.
	Domain string
	// Set is the result set of LIST DOMAINS and DESCRIBE DOMAIN.
	Set *ResultSet
	// Clock is the observed clock of an attach reply; nil otherwise.
	Clock *clock.Observed
	// Attachment is the attachment number of an attach reply; 0 otherwise.
	Attachment uint64
	// Warnings say what the statement did not fully achieve although it
	// succeeded, such as a committed change that a live node had not
	// installed when the statement returned.
	Warnings []string
}

// ResultSet is a typed table: named, typed columns and rows of values in
// column order. Every row has exactly len(Columns) values.
type ResultSet struct {
	Columns []Column
	Rows    [][]Value
}

// RowSink receives one chunk of a result set streamed as it is produced:
// the columns and at most RowsChunkLimit rows, in order. The chunk is the
// sink's to keep. An error it returns ends the statement.
type RowSink func(chunk *ResultSet) error

// Column is one column of a result set.
type Column struct {
	// Name is the column name in lower snake case, as JSON keys use it.
	Name string
	// Type is the kind of every non-null value in the column.
	Type ValueKind
}

// ValueKind is the type of a result-set value.
type ValueKind uint8

// Value kinds. A Null value may appear in a column of any kind.
const (
	// KindNull is the absent value: a domain without a mapping has no
	// mapping columns.
	KindNull ValueKind = iota
	// KindText is a string.
	KindText
	// KindUint is an unsigned integer, such as a generation.
	KindUint
	// KindDuration is unsigned nanoseconds, printed as NSPL duration text.
	KindDuration
	// KindTimestamp is signed Unix nanoseconds, printed as RFC 3339 UTC.
	KindTimestamp
	// KindRate is a positive finite TIME RATE.
	KindRate
)

// String returns the kind's lower-case name.
func (k ValueKind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindText:
		return "text"
	case KindUint:
		return "uint"
	case KindDuration:
		return "duration"
	case KindTimestamp:
		return "timestamp"
	case KindRate:
		return "rate"
	default:
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// Value is one typed cell of a result set. The zero Value is null.
type Value struct {
	kind ValueKind
	text string
	bits uint64 // uint and duration as is, timestamp as int64, rate as float64 bits
}

// Null returns the null value.
func Null() Value { return Value{} }

// Text returns a text value.
func Text(s string) Value { return Value{kind: KindText, text: s} }

// Uint returns an unsigned integer value.
func Uint(u uint64) Value { return Value{kind: KindUint, bits: u} }

// Duration returns a duration value of ns nanoseconds.
func Duration(ns uint64) Value { return Value{kind: KindDuration, bits: ns} }

// Timestamp returns a timestamp value of signed Unix nanoseconds.
func Timestamp(unixNanos int64) Value { return Value{kind: KindTimestamp, bits: uint64(unixNanos)} }

// Rate returns a TIME RATE value.
func Rate(r float64) Value { return Value{kind: KindRate, bits: math.Float64bits(r)} }

// Kind returns the value's kind.
func (v Value) Kind() ValueKind { return v.kind }

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v.kind == KindNull }

// Text returns a text value's string ("" for other kinds).
func (v Value) Text() string { return v.text }

// Uint returns the unsigned integer of a uint or duration value.
func (v Value) Uint() uint64 {
	if v.kind == KindUint || v.kind == KindDuration {
		return v.bits
	}
	return 0
}

// Int returns the Unix nanoseconds of a timestamp value.
func (v Value) Int() int64 {
	if v.kind == KindTimestamp {
		return int64(v.bits)
	}
	return 0
}

// Time returns a timestamp value as a time.Time in UTC, and the zero Time
// for other kinds. Every signed Unix-nanosecond instant is representable.
func (v Value) Time() time.Time {
	if v.kind != KindTimestamp {
		return time.Time{}
	}
	return time.Unix(0, int64(v.bits)).UTC()
}

// Duration returns a duration value as a time.Duration. ok is false for
// other kinds and for a duration past time.Duration's range (about 292
// years, 2^63-1 ns), which NSPL durations (up to 2^64-1 ns) can exceed:
// Uint returns every one of them exactly.
func (v Value) Duration() (d time.Duration, ok bool) {
	if v.kind != KindDuration || v.bits > math.MaxInt64 {
		return 0, false
	}
	return time.Duration(v.bits), true
}

// String returns v as the shell prints it in a result set: text as is,
// integers in decimal, durations and rates as NSPL reads them back ("1.5s",
// "60"), timestamps as RFC 3339 UTC with their nanoseconds, trailing zeros
// trimmed ("2026-01-01T00:00:00.000000001Z"), and null as "NULL".
func (v Value) String() string {
	switch v.kind {
	case KindText:
		return v.text
	case KindUint:
		return strconv.FormatUint(v.bits, 10)
	case KindDuration:
		return literal.FormatDuration(v.bits)
	case KindTimestamp:
		return literal.FormatTimestamp(int64(v.bits))
	case KindRate:
		return literal.FormatRate(math.Float64frombits(v.bits))
	default:
		return "NULL"
	}
}

// Float returns the rate of a rate value.
func (v Value) Float() float64 {
	if v.kind == KindRate {
		return math.Float64frombits(v.bits)
	}
	return 0
}

// Column returns the index of the named column, or -1.
func (s *ResultSet) Column(name string) int {
	for i, c := range s.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}
