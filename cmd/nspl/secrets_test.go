package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckPrivate(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		ok   bool
	}{
		{0o600, true},
		{0o400, true},
		{0o700, true},
		{0o640, false},
		{0o604, false},
		{0o610, false},
		{0o602, false},
		{0o644, false},
	} {
		p := filepath.Join(dir, "key-"+tc.mode.String())
		require.NoError(t, os.WriteFile(p, []byte("k"), 0o600))
		require.NoError(t, os.Chmod(p, tc.mode))
		err := checkPrivate("--key", p)
		if tc.ok {
			require.NoError(t, err, tc.mode)
			continue
		}
		require.ErrorIs(t, err, ErrIO, tc.mode)
		require.ErrorContains(t, err, "chmod 600 "+p)
	}
	require.ErrorIs(t, checkPrivate("--key", filepath.Join(dir, "missing")), ErrIO)

	// A token file open to others is refused before it is read.
	tok := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tok, []byte("s3cret\n"), 0o644))
	require.NoError(t, os.Chmod(tok, 0o644))
	_, err := (&serveOptions{tokenFile: tok}).token()
	require.ErrorContains(t, err, "--token-file")
	require.ErrorContains(t, err, "chmod 600")
	require.NoError(t, os.Chmod(tok, 0o600))
	got, err := (&serveOptions{tokenFile: tok}).token()
	require.NoError(t, err)
	require.Equal(t, "s3cret", got)
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"certs/node-n1.key": "certs/node-n1.key",
		"my key":            "'my key'",
		"it's":              `'it'\''s'`,
		"":                  "''",
		"$HOME/k":           "'$HOME/k'",
	} {
		require.Equal(t, want, shellQuote(in), in)
	}
}
