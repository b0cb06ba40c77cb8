package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadLimitedBoundary(t *testing.T) {
	for _, tt := range []struct {
		name string
		size int
		ok   bool
	}{
		{"empty", 0, true},
		{"just inside", 99, true},
		{"at the bound", 100, true},
		{"just outside", 101, false},
		{"far outside", 1 << 20, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := readLimited(bytes.NewReader(make([]byte, tt.size)), 100, "the input")
			if tt.ok {
				require.NoError(t, err)
				require.Len(t, b, tt.size)
				return
			}
			require.ErrorContains(t, err, "the input is larger than 100 bytes")
		})
	}
}

// TestScriptAndTokenFilesAreBounded checks that the script and token paths
// refuse a file one byte over their bound instead of reading it whole.
func TestScriptAndTokenFilesAreBounded(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int64) string { // sparse: cheap at any size
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, nil, 0o600))
		require.NoError(t, os.Truncate(p, size))
		return p
	}
	m := &Main{Stderr: io.Discard, Stdin: strings.NewReader("")}

	_, err := m.readSources([]scriptSource{{kind: sourceFile, arg: write("big.nspl", maxScriptBytes+1)}})
	require.ErrorIs(t, err, ErrIO)
	require.ErrorContains(t, err, "is larger than")
	s, err := m.readSources([]scriptSource{{kind: sourceFile, arg: write("ok.nspl", 10)}})
	require.NoError(t, err)
	require.Len(t, s, 1)

	m.Stdin = io.LimitReader(zeros{}, maxScriptBytes+1)
	_, err = m.readSources([]scriptSource{{kind: sourceStdin, arg: "-"}})
	require.ErrorIs(t, err, ErrIO)
	require.ErrorContains(t, err, "the script on stdin is larger than")

	_, err = m.clientConfig(remoteOptions{connect: "http://127.0.0.1:1", tokenFile: write("token", maxTokenBytes+1)}, false)
	require.ErrorIs(t, err, ErrIO)
	require.ErrorContains(t, err, "is larger than")
	_, err = (&serveOptions{tokenFile: write("token2", maxTokenBytes+1)}).token()
	require.ErrorIs(t, err, ErrIO)
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
