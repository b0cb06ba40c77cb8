package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRepositoryListsRead holds the module's own table and lists to what
// make mutate needs before it runs anything: every row reads, every entry
// names a row that names tests, every entry's text is in its file exactly
// once, every behavioural row has an entry and the table's mutation column
// is the lists', so a change to the product that moves a mutated line fails
// here, in make test, rather than first in make mutate.
func TestRepositoryListsRead(t *testing.T) {
	t.Chdir("../..")
	p, err := load(options{table: "docs/spec-coverage.md", list: "docs/mutations"})
	require.NoError(t, err)
	require.NoError(t, p.tab.rowErrors(func(*row) bool { return true }))
	require.NotEmpty(t, p.muts)
	require.NoError(t, p.complete("docs/spec-coverage.md"), "every behavioural row has a mutation and the table's column is the lists'")
}

// TestREADMEEntryIsAListEntry keeps the README's example entry one that
// the lists really hold.
func TestREADMEEntryIsAListEntry(t *testing.T) {
	t.Chdir("../..")
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), "mutations, written from the lists")
	require.True(t, ok, "the README describes the lists")
	_, block, ok := strings.Cut(after, "```text\n")
	require.True(t, ok)
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	example, err := parseList("README.md", block)
	require.NoError(t, err)
	require.Len(t, example, 1)
	p, err := load(options{table: "docs/spec-coverage.md", list: "docs/mutations"})
	require.NoError(t, err)
	found := false
	for _, m := range p.muts {
		if m.file == example[0].file && m.from == example[0].from && m.to == example[0].to && m.what == example[0].what &&
			strings.Join(m.rows, " ") == strings.Join(example[0].rows, " ") {
			found = true
		}
	}
	require.True(t, found, "the README's entry is not in docs/mutations")
}
