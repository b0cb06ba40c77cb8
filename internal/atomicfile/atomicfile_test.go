package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		perm os.FileMode
	}{
		{"private", 0o600},
		{"shared", 0o644},
		{"executable", 0o755},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "a.nspl")
			require.NoError(t, os.WriteFile(path, []byte("old contents\n"), 0o600))
			require.NoError(t, WriteFile(path, []byte("new\n"), tc.perm))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, "new\n", string(b))
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, tc.perm, fi.Mode().Perm())
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "no temporary file is left behind")
		})
	}
}

func TestWriteFileKeepsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.nspl")
	link := filepath.Join(dir, "link.nspl")
	require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))
	require.NoError(t, os.Symlink("target.nspl", link))
	require.NoError(t, WriteFile(link, []byte("new\n"), 0o644))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is still a link")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "new\n", string(b))
}

func TestWriteFileFailureLeavesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing", "a.nspl")
	err := WriteFile(path, []byte("x"), 0o644)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Contains(t, err.Error(), "create a temporary file beside")
}

// TestLinkPolicy holds what each entry point does with a symbolic link at
// the path: WriteFile writes through it and keeps it, ReplaceFile replaces
// the link and leaves its target alone.
func TestLinkPolicy(t *testing.T) {
	for _, tc := range []struct {
		name       string
		write      func(string, []byte, os.FileMode) error
		linkKept   bool
		targetText string
	}{
		{"WriteFile follows the link", WriteFile, true, "new\n"},
		{"ReplaceFile replaces the link", ReplaceFile, false, "old\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "target")
			link := filepath.Join(dir, "link")
			require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))
			require.NoError(t, os.Symlink("target", link))
			require.NoError(t, tc.write(link, []byte("new\n"), 0o600))
			fi, err := os.Lstat(link)
			require.NoError(t, err)
			require.Equal(t, tc.linkKept, fi.Mode()&os.ModeSymlink != 0, "whether the link is still a link")
			b, err := os.ReadFile(target)
			require.NoError(t, err)
			require.Equal(t, tc.targetText, string(b))
			b, err = os.ReadFile(link)
			require.NoError(t, err)
			require.Equal(t, "new\n", string(b), "the path reads the new contents")
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 2, "no temporary file is left behind")
		})
	}
}

// TestReplaceFile holds ReplaceFile's own promises: the mode it is given,
// the new contents whole, and a directory refused and left as it was with
// no temporary file behind.
func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.nsplbak")
	require.NoError(t, os.WriteFile(path, []byte("old contents\n"), 0o644))
	require.NoError(t, ReplaceFile(path, []byte("new\n"), 0o600))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "new\n", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "kept"), nil, 0o600))
	err = ReplaceFile(sub, []byte("x"), 0o600)
	require.Error(t, err)
	require.Contains(t, err.Error(), "rename")
	fi, err = os.Lstat(sub)
	require.NoError(t, err)
	require.True(t, fi.IsDir(), "the directory is left as it was")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "no temporary file is left behind")
}
