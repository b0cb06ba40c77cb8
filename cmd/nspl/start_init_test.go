package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// initAllocBudget bounds the bytes any one of nspl's own packages
// allocates in its package initialisation. Every process pays for it,
// nspl -c included; a table, cache or registry that is large enough to
// matter is built on first use instead.
const initAllocBudget = 8 << 10

// initLine is one package's line of GODEBUG=inittrace=1.
var initLine = regexp.MustCompile(`(?m)^init (github\.com/nspl-dev/nspl\S*) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

// TestPackageInitWithinBudget runs nspl --version with GODEBUG=inittrace=1
// and holds each of nspl's own packages' initialisation to initAllocBudget
// bytes. (This package, cmd/nspl, is left out: in the test binary its
// initialisation holds the tests' variables too.)
func TestPackageInitWithinBudget(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "nspl")
	require.NoError(t, os.Symlink(exe, bin))
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := initLine.FindAllStringSubmatch(string(out), -1)
	require.NotEmpty(t, lines, "no inittrace lines of nspl's packages in:\n%s", out)
	for _, m := range lines {
		if m[1] == "github.com/nspl-dev/nspl/cmd/nspl" {
			continue
		}
		bytes, err := strconv.Atoi(m[2])
		require.NoError(t, err)
		require.LessOrEqual(t, bytes, initAllocBudget, "package %s allocates %d bytes (%s allocations) at init; build what it needs on first use", m[1], bytes, m[3])
	}
}
