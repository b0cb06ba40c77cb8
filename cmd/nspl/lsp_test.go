package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/internal/lsp"
)

// TestLSPMessageLimitDocumented keeps the message limit nspl lsp --help and
// the README state true to the one the server applies.
func TestLSPMessageLimitDocumented(t *testing.T) {
	require.Zero(t, lsp.DefaultMaxMessage%(1<<20))
	want := fmt.Sprintf("over %d MiB", lsp.DefaultMaxMessage>>20)
	require.Contains(t, strings.Join(strings.Fields(commandHelps["lsp"].about), " "), want)
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	require.Contains(t, strings.Join(strings.Fields(string(b)), " "), "A message body "+want)
}
