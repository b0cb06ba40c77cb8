package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEGoVersionIsGoMods keeps the README's "Go X or later" the go
// line of go.mod: an older toolchain refuses the module with
// GOTOOLCHAIN=local, so the README must not promise less.
func TestREADMEGoVersionIsGoMods(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	require.NotNil(t, goLine, "go.mod has a go line")
	claims := regexp.MustCompile(`Go (\d+\.\d+(?:\.\d+)?) or later`).FindAllSubmatch(readme, -1)
	require.NotEmpty(t, claims, "README says which Go it needs")
	for _, c := range claims {
		require.Equal(t, string(goLine[1]), string(c[1]), "README's Go version and go.mod's go line differ")
	}
}
