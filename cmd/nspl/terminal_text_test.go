package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/wire"
)

func TestTermSafe(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text is kept", "domain 'prod' at 2030-01-01T00:00:00Z", "domain 'prod' at 2030-01-01T00:00:00Z"},
		{"tab is kept", "a\tb", "a\tb"},
		{"backslash is kept", `C:\x1b`, `C:\x1b`},
		{"printable edges", " ~", " ~"},
		{"NUL", "a\x00b", `a\x00b`},
		{"just below space", "\x1f", `\x1f`},
		{"ESC of a title change", "n1\x1b]0;pwned\x07", `n1\x1b]0;pwned\a`},
		{"screen clear", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"a forged line", "n1\nnspl: all good", `n1\nnspl: all good`},
		{"carriage return", "ok\rbad", `ok\rbad`},
		{"named escapes", "\a\b\f\v", `\a\b\f\v`},
		{"DEL", "\x7f", `\x7f`},
		{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`},
		{"first C1", "\u0080", `\u0080`},
		{"last C1", "\u009f", `\u009f`},
		{"first rune after C1", "\u00a0", "\u00a0"},
		{"right-to-left override", "abc\u202edef", `abc\u202edef`},
		{"just before the overrides", "\u2029", "\u2029"},
		{"just after the isolates", "\u206a", "\u206a"},
		{"first isolate", "\u2066", `\u2066`},
		{"last isolate", "\u2069", `\u2069`},
		{"other Unicode is kept", "héllo wörld 日本", "héllo wörld 日本"},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, termSafe(tt.in))
		})
	}
}

func TestTermSafeLines(t *testing.T) {
	require.Equal(t, "two\nlines", termSafeLines("two\nlines"))
	require.Equal(t, `a\x1b[2J`+"\n"+`b\r`, termSafeLines("a\x1b[2J\nb\r"))
	require.Equal(t, `\a`, termSafeLines("\x07"))
}

// FuzzTermSafe holds that termSafe's output is valid UTF-8 with no byte or
// rune a terminal acts on, that safe text comes back unchanged, and that
// escaping is idempotent.
func FuzzTermSafe(f *testing.F) {
	for _, s := range []string{"", "prod", "n1\x1b]0;t\x07\nforged", "\u009b\u202e", "\xff\xfe", "a\tb", `\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := termSafe(s)
		require.True(t, utf8.ValidString(out))
		for _, r := range out {
			require.False(t, r < 0x20 && r != '\t' || r == 0x7f || unsafeRune(r), "rune %U in %q", r, out)
		}
		require.Equal(t, out, termSafe(out))
		if !strings.ContainsFunc(s, func(r rune) bool {
			return r < 0x20 && r != '\t' || r == 0x7f || unsafeRune(r) || r == utf8.RuneError
		}) {
			require.Equal(t, s, out)
		}
	})
}

// TestArchiveTextIsEscaped reads an archive whose manifest names its
// capturing node with a title change, a screen clear and a forged line:
// DESCRIBE BACKUP on an embedded node prints the name with its controls
// escaped (JSON escapes it its own way), and so does a remote shell
// uploading the archive to a node.
func TestArchiveTextIsEscaped(t *testing.T) {
	b, err := backup.Encode(backup.Archive{Version: backup.Version, CapturedAt: 1, Scope: backup.ScopeCluster,
		Node: hostileText, CatalogRevision: 1,
		Domains: []backup.Domain{{Record: lifecycle.Domain{Name: "idle", Pace: lifecycle.Unpaced, Revision: 1}}}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "hostile.nsplbak")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	url := serveInsecureNode(t)
	for _, tc := range []struct{ name, format, want string }{
		{"embedded table", "table", `n1\x1b]0;pwned\a\x1b[2J\nnspl: forged line`},
		{"embedded json", "json", `n1\u001b]0;pwned\u0007\u001b[2J\nnspl: forged line`},
		{"remote table", "table", `n1\x1b]0;pwned\a\x1b[2J\nnspl: forged line`},
		{"remote json", "json", `n1\u001b]0;pwned\u0007\u001b[2J\nnspl: forged line`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			format, want := tc.format, tc.want
			args := []string{"--format", format, "-c", "DESCRIBE BACKUP '" + path + "';"}
			if strings.HasPrefix(tc.name, "remote") {
				args = append([]string{"--connect", url}, args...)
			}
			var out, errOut strings.Builder
			m := &Main{Stdout: &out, Stderr: &errOut}
			require.NoError(t, m.Run(context.Background(), args), errOut.String())
			require.NotContains(t, out.String(), "\x1b")
			require.NotContains(t, out.String(), "\x07")
			require.NotContains(t, out.String(), "\nnspl: forged line")
			require.Contains(t, out.String(), "by node '"+want+"'")
		})
	}
}

// TestShellTextIsEscaped holds the other paths server text takes to the
// terminal: the prompt naming the active domain the server reports, clock
// event lines naming the domain and the failure a node sends, and notices.
func TestShellTextIsEscaped(t *testing.T) {
	const want = `n1\x1b]0;pwned\a\x1b[2J\nnspl: forged line`
	require.Equal(t, "nspl[`"+want+"`]> ", promptFor(hostileText, false))
	ev := follow.ClockEvent{Kind: follow.EventError, Domain: hostileText, Failure: &wire.ClockFailure{Message: hostileText}}
	require.Equal(t, "[clock `"+want+"`] error: "+want, shellEventLine(ev))
	line := clockEventLine(ev, formatTable)
	require.NotContains(t, line, "\x1b")
	require.NotContains(t, line, "\n")
	require.Contains(t, line, want)
	var errOut strings.Builder
	m := &Main{Stderr: &errOut}
	m.notice("reconnected to node " + hostileText)
	require.Equal(t, "reconnected to node "+want+"\n", errOut.String())
}

// serveInsecureNode serves an in-memory node over plain HTTP on loopback
// until the test ends and returns its URL.
func serveInsecureNode(t *testing.T) string {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	n, err := node.Open(context.Background(), node.Config{Logger: logger, RaftLogLevel: slog.LevelError})
	require.NoError(t, err)
	srv, err := server.New(server.Config{Node: n, Insecure: true, Logger: logger})
	require.NoError(t, err)
	ln, err := srv.Listen("127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		<-done
		require.NoError(t, n.Close())
	})
	return "http://" + ln.Addr().String()
}
