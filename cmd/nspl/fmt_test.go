package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFmtArgs(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  fmtOptions
		usage string // a usage error containing this, when set
		help  bool
	}{
		{args: nil, want: fmtOptions{}},
		{args: []string{"a.nspl", "dir"}, want: fmtOptions{paths: []string{"a.nspl", "dir"}}},
		{args: []string{"--check", "a.nspl"}, want: fmtOptions{check: true, paths: []string{"a.nspl"}}},
		{args: []string{"a.nspl", "--diff", "b.nspl", "--check"}, want: fmtOptions{check: true, diff: true, paths: []string{"a.nspl", "b.nspl"}}},
		{args: []string{"-"}, want: fmtOptions{paths: []string{"-"}}},
		{args: []string{"--check", "--", "--diff", "-x"}, want: fmtOptions{check: true, paths: []string{"--diff", "-x"}}},
		{args: []string{"a.nspl", "--", "--check"}, want: fmtOptions{paths: []string{"a.nspl", "--check"}}},
		{args: []string{"--help"}, help: true},
		{args: []string{"a.nspl", "-h"}, help: true},
		{args: []string{"--bogus"}, usage: "unknown flag --bogus"},
		{args: []string{"-", "a", "-"}, usage: "stdin (-) can be read only once"},
		{args: []string{""}, usage: "empty path"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := parseFmtArgs(tc.args)
			switch {
			case tc.help:
				require.ErrorIs(t, err, flag.ErrHelp)
			case tc.usage != "":
				require.ErrorIs(t, err, ErrUsage)
				require.ErrorContains(t, err, tc.usage)
				require.Equal(t, ExitUsage, ExitCode(err))
			default:
				require.NoError(t, err)
				require.Equal(t, tc.want, got)
			}
		})
	}
}

// TestFmtRewritesOnlyWhatChanges holds that a formatted file is not touched
// (the same inode, so its timestamps and links stay) and that an unformatted
// one is replaced whole by a rename, not written over in place.
func TestFmtRewritesOnlyWhatChanges(t *testing.T) {
	dir := t.TempDir()
	formatted := filepath.Join(dir, "formatted.nspl")
	messy := filepath.Join(dir, "messy.nspl")
	require.NoError(t, os.WriteFile(formatted, []byte("USE a;\n"), 0o644))
	require.NoError(t, os.WriteFile(messy, []byte("use a"), 0o644))
	before := map[string]os.FileInfo{}
	for _, p := range []string{formatted, messy} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		before[p] = fi
	}
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr, Stdin: strings.NewReader("")}
	require.NoError(t, m.Run(context.Background(), []string{"fmt", dir}))
	require.Empty(t, stdout.String())
	require.Empty(t, stderr.String())

	fi, err := os.Stat(formatted)
	require.NoError(t, err)
	require.True(t, os.SameFile(before[formatted], fi), "a formatted file is left alone")
	fi, err = os.Stat(messy)
	require.NoError(t, err)
	require.False(t, os.SameFile(before[messy], fi), "an unformatted file is replaced by a rename")
	b, err := os.ReadFile(messy)
	require.NoError(t, err)
	require.Equal(t, "USE a;\n", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "no temporary file is left behind")
}

func TestFmtExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	good := write("good.nspl", "USE a;\n")
	messy := write("messy.nspl", "use a")
	broken := write("broken.nspl", "USE a STOP;")
	missing := filepath.Join(dir, "missing.nspl")
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"formatted", []string{"--check", good}, ExitOK},
		{"would change", []string{"--check", good, messy}, ExitFmtUnformatted},
		{"diff alone", []string{"--diff", messy}, ExitOK},
		{"syntax error", []string{"--check", broken}, ExitFmtSyntax},
		{"syntax error beats would change", []string{"--check", messy, broken}, ExitFmtSyntax},
		{"missing file", []string{missing}, ExitFmtIO},
		{"not a regular file", []string{os.DevNull}, ExitFmtIO},
		{"i/o beats syntax", []string{"--check", broken, missing, messy}, ExitFmtIO},
		{"usage", []string{"--nope"}, ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Main{Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer), Stdin: strings.NewReader("")}
			err := m.Run(context.Background(), append([]string{"fmt"}, tc.args...))
			require.Equal(t, tc.code, ExitCode(err), "%v", err)
			if tc.code != ExitOK && tc.code != ExitUsage {
				require.True(t, reported(err), "the details were printed already")
			}
		})
	}
}
