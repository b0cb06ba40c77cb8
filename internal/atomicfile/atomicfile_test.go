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

// TestWriteFileReplacesALinkNotItsTarget holds that a write follows no
// link: the link at path becomes the new file and its target keeps its
// contents.
func TestWriteFileReplacesALinkNotItsTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.nspl")
	link := filepath.Join(dir, "link.nspl")
	require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))
	require.NoError(t, os.Symlink("target.nspl", link))
	require.NoError(t, WriteFile(link, []byte("new\n"), 0o644))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "the link was replaced by a regular file")
	b, err := os.ReadFile(link)
	require.NoError(t, err)
	require.Equal(t, "new\n", string(b))
	b, err = os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "old\n", string(b), "the link's target is untouched")
}

func TestWriteFileFailureLeavesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing", "a.nspl")
	err := WriteFile(path, []byte("x"), 0o644)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Contains(t, err.Error(), "create a temporary file beside")
}

// TestWriteFileRefusesADirectory holds that a directory at path is not
// replaced: the write fails at the rename and leaves the directory as it
// was, with no temporary file behind.
func TestWriteFileRefusesADirectory(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "kept"), nil, 0o600))
	err := WriteFile(sub, []byte("x"), 0o600)
	require.Error(t, err)
	require.Contains(t, err.Error(), "rename")
	fi, err := os.Lstat(sub)
	require.NoError(t, err)
	require.True(t, fi.IsDir(), "the directory is left as it was")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
}
