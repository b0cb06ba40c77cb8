package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestServerIDPersistedOnFirstStart(t *testing.T) {
	dir := t.TempDir()
	id, err := loadOrCreateServerID(dir)
	require.NoError(t, err)
	require.True(t, validServerID([]byte(id)), id)
	for range 3 {
		again, err := loadOrCreateServerID(dir)
		require.NoError(t, err)
		require.Equal(t, id, again)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
	require.Equal(t, serverIDFile, entries[0].Name())

	other, err := loadOrCreateServerID(t.TempDir())
	require.NoError(t, err)
	require.NotEqual(t, id, other)
}

func TestServerIDFileValidation(t *testing.T) {
	hex32 := strings.Repeat("0123456789abcdef", 2)
	tests := []struct {
		name    string
		content string
		ok      bool
	}{
		{"exact", hex32, true},
		{"with newline", hex32 + "\n", true},
		{"one digit short", hex32[:31], false},
		{"one digit long", hex32 + "0", false},
		{"upper case", strings.ToUpper(hex32), false},
		{"not hex", "g" + hex32[1:], false},
		{"two newlines", hex32 + "\n\n", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, serverIDFile), []byte(tt.content), 0o600))
			id, err := loadOrCreateServerID(dir)
			if tt.ok {
				require.NoError(t, err)
				require.Equal(t, hex32, id)
				return
			}
			require.ErrorIs(t, err, ErrDataDir)
			require.ErrorContains(t, err, "restore it from a backup or remove the whole data directory")
		})
	}
}

func TestServerIDFileReadIsBounded(t *testing.T) {
	hex32 := strings.Repeat("0123456789abcdef", 2)
	for _, size := range []int{maxServerIDFile - 1, maxServerIDFile, maxServerIDFile + 1, 1 << 20} {
		dir := t.TempDir()
		content := hex32 + strings.Repeat("0", size-len(hex32))
		require.NoError(t, os.WriteFile(filepath.Join(dir, serverIDFile), []byte(content), 0o600))
		_, err := loadOrCreateServerID(dir)
		require.ErrorIs(t, err, ErrDataDir)
		require.Less(t, len(err.Error()), 2*maxServerIDFile+300, "the refusal quotes at most the bytes read")
	}
}

func TestServerIDUnreadable(t *testing.T) {
	dir := t.TempDir()
	// A directory where the file should be cannot be read as one.
	require.NoError(t, os.Mkdir(filepath.Join(dir, serverIDFile), 0o700))
	_, err := loadOrCreateServerID(dir)
	require.ErrorIs(t, err, ErrDataDir)

	_, err = loadOrCreateServerID(filepath.Join(dir, "missing", "deeper"))
	require.ErrorIs(t, err, ErrDataDir, "a directory that does not exist cannot hold the id")
}

func TestIncarnationsAreFreshAndNonZero(t *testing.T) {
	seen := map[uint64]bool{}
	for range 1000 {
		v, err := newIncarnation()
		require.NoError(t, err)
		require.NotZero(t, v)
		require.False(t, seen[v])
		seen[v] = true
	}
}
