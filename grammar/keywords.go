package grammar

import "github.com/nspl-dev/nspl/literal"

// The language's keywords are package literal's (a name is quoted when it
// is one, and literal prints names for wire too): a new statement adds its
// words there and its rule in parser.go.

// keywords is every keyword in its canonical upper-case spelling, sorted.
var keywords = literal.Keywords()

// lookupKeyword returns the canonical spelling of word if it is a keyword
// in any letter case.
func lookupKeyword(word string) (string, bool) { return literal.LookupKeyword(word) }

// IsKeyword reports whether word, in any letter case, is a reserved keyword.
func IsKeyword(word string) bool {
	_, ok := lookupKeyword(word)
	return ok
}

// Keywords returns every reserved keyword, upper-case and sorted.
func Keywords() []string { return literal.Keywords() }
