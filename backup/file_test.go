package backup

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteFileRefusesNonArchives checks what WriteFile replaces without
// being told to overwrite: nothing but a missing file, an empty file or an
// older archive.
func TestWriteFileRefusesNonArchives(t *testing.T) {
	dir := t.TempDir()
	b, err := Encode(cluster(pacedRunning("prod", 60)))
	require.NoError(t, err)
	older := filepath.Join(dir, "older.nsplbak")
	_, _, err = Write(older, cluster(neverStarted("old")), WriteOptions{})
	require.NoError(t, err)
	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("precious"), 0o644))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(older, link))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))

	for _, tc := range []struct {
		name      string
		path      string
		want      error // without Overwrite
		overwrite error // with Overwrite
	}{
		{"missing", filepath.Join(dir, "new.nsplbak"), nil, nil},
		{"older archive", older, nil, nil},
		{"empty file", empty, nil, nil},
		{"text file", text, ErrNotArchive, nil},
		{"symlink", link, ErrNotArchive, nil},
		{"fifo", fifo, ErrNotArchive, nil},
		{"directory", sub, ErrPath, ErrPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, statErr := os.Lstat(tc.path)
			_, err := WriteFile(tc.path, b, WriteOptions{})
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
				after, lerr := os.Lstat(tc.path)
				require.NoError(t, statErr)
				require.NoError(t, lerr)
				require.Equal(t, before.Mode(), after.Mode(), "a refused write leaves the destination as it was")
				require.Equal(t, before.Size(), after.Size())
				if tc.overwrite != nil {
					_, err = WriteFile(tc.path, b, WriteOptions{Overwrite: true})
					require.ErrorIs(t, err, tc.overwrite)
					return
				}
				_, err = WriteFile(tc.path, b, WriteOptions{Overwrite: true})
			}
			require.NoError(t, err)
			fi, err := os.Lstat(tc.path)
			require.NoError(t, err)
			require.True(t, fi.Mode().IsRegular())
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
			_, a, err := Read(tc.path)
			require.NoError(t, err)
			require.Equal(t, []string{"prod"}, a.Names())
		})
	}
}

// TestReadFileRegularOnly checks ReadFile reads regular files only and
// does not block on a FIFO or read a device.
func TestReadFileRegularOnly(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, p := range []string{fifo, "/dev/zero", "/dev/null"} {
		_, _, err := ReadFile(p)
		require.ErrorIs(t, err, ErrPath, p)
		require.ErrorContains(t, err, "is not a regular file", p)
	}
	_, _, err := Read(dir)
	require.ErrorContains(t, err, "is a directory")
}
