package main

import (
	"bytes"
	"context"
	"flag"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNearest(t *testing.T) {
	flags := []string{"c", "f", "format", "connect", "continue-on-error", "data-dir", "dir", "to", "until-tick"}
	tests := []struct {
		word, want string
		ok         bool
	}{
		{"formt", "format", true},
		{"FORMAT", "format", true},
		{"fromat", "format", true}, // a swap is one edit
		{"conect", "connect", true},
		{"dri", "dir", true},
		{"too", "to", true},
		{"data_dir", "data-dir", true},
		{"untill-tick", "until-tick", true},
		{"x", "", false},  // one letter is too short to guess from
		{"fx", "f", true}, // two: one edit
		{"bogus", "", false},
		{"forxxt", "format", true}, // longer words take two edits
		{"frxxxt", "", false},
	}
	for _, tt := range tests {
		got, ok := nearest(tt.word, flags)
		require.Equal(t, tt.ok, ok, tt.word)
		if tt.ok {
			require.Equal(t, tt.want, got, tt.word)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"serve", "serve", 0},
		{"srve", "serve", 1},
		{"sevre", "serve", 1},
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, // optimal string alignment, not full Damerau
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, editDistance(tt.a, tt.b), "%q %q", tt.a, tt.b)
		require.Equal(t, tt.want, editDistance(tt.b, tt.a), "%q %q", tt.b, tt.a)
	}
}

func TestVersionText(t *testing.T) {
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want []string
	}{
		{name: "release with vcs", ok: true, info: &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Path: "github.com/nspl-dev/nspl", Version: "v1.4.0"},
			Settings: []debug.BuildSetting{
				{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
				{Key: "vcs.revision", Value: "1f3a9c2e"}, {Key: "vcs.time", Value: "2026-11-30T12:00:00Z"},
				{Key: "vcs.modified", Value: "false"},
			},
		}, want: []string{
			"nspl v1.4.0", "module: github.com/nspl-dev/nspl", "revision: 1f3a9c2e",
			"committed: 2026-11-30T12:00:00Z", "go: go1.26.8 linux/arm64",
		}},
		{name: "checkout with changes", ok: true, info: &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Path: "github.com/nspl-dev/nspl", Version: "(devel)"},
			Settings: []debug.BuildSetting{
				{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
				{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"},
			},
		}, want: []string{"nspl (devel)", "module: github.com/nspl-dev/nspl", "revision: abc (modified)", "go: go1.26.8 linux/amd64"}},
		{name: "no vcs, no version", ok: true, info: &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Settings:  []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}},
		}, want: []string{"nspl (devel)", "revision: unknown (built without VCS information)", "go: go1.26.8 linux/amd64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, strings.Join(tt.want, "\n")+"\n", versionText(tt.info, tt.ok))
		})
	}
	t.Run("no build info", func(t *testing.T) {
		out := versionText(nil, false)
		require.True(t, strings.HasPrefix(out, "nspl (devel)\nrevision: unknown (no build information in this binary)\ngo: go"), out)
	})
}

// TestEveryCommandHasItsOwnHelp runs nspl help COMMAND for every command
// nspl knows: each prints its own page, never nspl's, and lists every flag
// its flag set takes.
func TestEveryCommandHasItsOwnHelp(t *testing.T) {
	for _, cmd := range commands {
		t.Run(cmd, func(t *testing.T) {
			var out bytes.Buffer
			m := &Main{Stdout: &out, Stderr: &out}
			require.NoError(t, m.Run(context.Background(), []string{"help", cmd}))
			require.True(t, strings.HasPrefix(out.String(), "nspl "+cmd), out.String())
			require.NotContains(t, out.String(), "Serve flags")
			if fs, ok := ownFlagSets()[cmd]; ok {
				// Its own page, from its own parser: it lists every flag.
				fs.VisitAll(func(f *flag.Flag) {
					listed := regexp.MustCompile(`(?m)(^|\s)` + regexp.QuoteMeta(flagSpelling(f.Name)) + `(\s|$)`)
					require.Regexp(t, listed, out.String(), "help for %s", cmd)
				})
				return
			}
			if cmd == "cert" {
				return // its own page, from its own parser
			}
			_, err := parseArgs([]string{cmd, "--help"})
			var h *helpRequest
			require.ErrorAs(t, err, &h)
			require.ErrorIs(t, err, flag.ErrHelp)
			require.Equal(t, cmd, h.command)
			if h.flags != nil {
				h.flags.VisitAll(func(f *flag.Flag) {
					listed := regexp.MustCompile(`(?m)(^|\s)` + regexp.QuoteMeta(flagSpelling(f.Name)) + `(\s|$)`)
					require.Regexp(t, listed, out.String(), "help for %s", cmd)
				})
			}
			_, ok := commandHelps[cmd]
			require.True(t, ok, "commandHelps has no entry for %s", cmd)
		})
	}
}
