package console

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLogoutsBound: below MaxLogouts current logouts each is refused on
// its own; the logout that would make MaxLogouts+1 refuses every login
// issued before it instead, and a login issued after is admitted. Expired
// logouts do not count.
func TestLogoutsBound(t *testing.T) {
	const now = int64(1_000_000)
	for _, tc := range []struct {
		name    string
		current int // unexpired logouts already held
		expired int // expired ones held beside them
		floor   bool
	}{
		{name: "just inside", current: MaxLogouts - 2},
		{name: "at the bound", current: MaxLogouts - 1},
		{name: "just outside", current: MaxLogouts, floor: true},
		{name: "expired ones do not count", current: MaxLogouts - 1, expired: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &logouts{ids: make(map[string]int64)}
			for i := range tc.current {
				l.ids[fmt.Sprint("live", i)] = now + 100
			}
			for i := range tc.expired {
				l.ids[fmt.Sprint("old", i)] = now
			}
			require.NoError(t, l.add("new", now+100, now))
			require.True(t, l.refused("new", now-1))
			require.True(t, l.refused("live0", now-1), "an earlier logout stays refused")
			require.Equal(t, tc.floor, l.refused("other", now-1), "a login issued before the logout that did not log out")
			require.False(t, l.refused("other", now), "a login issued at or after the floor")
			require.LessOrEqual(t, len(l.ids), MaxLogouts)
			require.NotContains(t, l.ids, "old0", "expired logouts are forgotten")
		})
	}
}

// TestLogoutFile: the file keeps refusals and the floor across a load,
// drops expired ones, is private to the node's user, and a file that does
// not read is an error rather than an empty set.
func TestLogoutFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "console-logouts.json")
	l, err := loadLogouts(path, 0)
	require.NoError(t, err, "no file yet")
	require.NoError(t, l.add("a", 100, 10))
	require.NoError(t, l.add("b", 50, 20))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	again, err := loadLogouts(path, 49)
	require.NoError(t, err)
	require.True(t, again.refused("a", 0))
	require.True(t, again.refused("b", 0))
	require.False(t, again.refused("c", 0))
	later, err := loadLogouts(path, 50)
	require.NoError(t, err)
	require.True(t, later.refused("a", 0))
	require.NotContains(t, later.ids, "b", "expired when loaded")

	later.notBefore = 30
	require.NoError(t, later.add("d", 100, 40))
	floor, err := loadLogouts(path, 40)
	require.NoError(t, err)
	require.True(t, floor.refused("c", 29), "the floor is kept")
	require.False(t, floor.refused("c", 30))

	for name, content := range map[string]string{
		"garbage":       "{",
		"other version": `{"version":2,"not_before":0,"logouts":{}}`,
		"no version":    `{"logouts":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			_, err := loadLogouts(path, 0)
			require.ErrorIs(t, err, ErrLogoutFile)
			require.ErrorContains(t, err, "remove it")
		})
	}

	big := `{"version":1,"not_before":0,"logouts":{`
	for i := range MaxLogouts + 1 {
		if i > 0 {
			big += ","
		}
		big += fmt.Sprintf(`"id%d":100`, i)
	}
	require.NoError(t, os.WriteFile(path, []byte(big+"}}"), 0o600))
	over, err := loadLogouts(path, 40)
	require.NoError(t, err)
	require.Empty(t, over.ids, "more than MaxLogouts are never held")
	require.True(t, over.refused("c", 39), "every earlier login ends instead")

	gone := &logouts{path: filepath.Join(dir, "missing", "console-logouts.json"), ids: make(map[string]int64)}
	require.ErrorIs(t, gone.add("e", 100, 0), ErrLogoutFile)
	require.True(t, gone.refused("e", 0), "a logout that cannot be kept still holds in memory")
}

// FuzzLogoutFile: any file content loads without a panic, either as an
// error naming the file or as a set that, written back, loads again with
// the same refusals.
func FuzzLogoutFile(f *testing.F) {
	f.Add([]byte(`{"version":1,"not_before":5,"logouts":{"a":100}}`))
	f.Add([]byte(`{"version":1,"logouts":null}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "console-logouts.json")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		l, err := loadLogouts(path, 10)
		if err != nil {
			require.ErrorIs(t, err, ErrLogoutFile)
			return
		}
		require.NoError(t, l.add("fuzz", 1<<62, 10))
		again, err := loadLogouts(path, 10)
		require.NoError(t, err)
		require.Equal(t, l.notBefore, again.notBefore)
		require.Equal(t, l.ids, again.ids)
	})
}
