package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/grammar"
)

func TestStoredName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"prod", true},
		{"prod-1", true},
		{"a~b_c", true},
		{"clock", true}, // a keyword is a name, offered in backticks
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{"PROD", false},   // not the stored, lower-case form
		{"`prod`", false}, // quoted: not the stored form
		{"$(touch x)", false},
		{"`touch x`", false},
		{"a;b", false},
		{"a b", false},
		{"p*", false},
		{"a.b", false},
		{"pr\x1b]0;x\x07", false},
		{"pr\nforged", false},
		{"é", false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.ok, storedName(tt.name), "%q", tt.name)
	}
}

// TestCompleterDropsNamesThatAreNotNames holds that a node's names pass
// storedName before the shell's Tab offers them.
func TestCompleterDropsNamesThatAreNotNames(t *testing.T) {
	c := statementCompleter{domains: func() []string { return hostileNames }}
	got, n := c.Do([]rune("USE "), 4)
	var words []string
	for _, g := range got {
		words = append(words, string(g))
	}
	require.Equal(t, []string{"prod ", "`prod-1` "}, words)
	require.Zero(t, n)
}

var nameBytes = regexp.MustCompile(`^[a-z0-9_~-]{1,128}$`)

// FuzzStoredName holds that a name storedName accepts holds only the bytes
// of grammar's name rule, none of which a shell or a terminal acts on, and
// that the form completion prints for it parses back to it.
func FuzzStoredName(f *testing.F) {
	for _, s := range hostileNames {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !storedName(s) {
			return
		}
		require.Regexp(t, nameBytes, s)
		back, err := grammar.ParseName(grammar.FormatName(s))
		require.NoError(t, err)
		require.Equal(t, s, back)
	})
}
