package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/stretchr/testify/require"
)

// hookEditor types lines, then calls last before it ends the input.
type hookEditor struct {
	typedEditor
	last func()
}

func (e *hookEditor) ReadLine(prompt string) (string, error) {
	if len(e.lines) == 0 && e.last != nil {
		e.last()
		e.last = nil
	}
	return e.typedEditor.ReadLine(prompt)
}

// TestShellServesTheConsole: nspl --console serves the embedded node's
// console while the shell runs, behind a token printed in the login link;
// the console shows what the shell created, and is gone once the shell
// exits.
func TestShellServesTheConsole(t *testing.T) {
	var mu sync.Mutex
	var stderr strings.Builder
	var addr string
	errOut := &lockedWriter{mu: &mu, w: &stderr}
	out := &lockedWriter{mu: &mu, w: io.Discard}
	link := regexp.MustCompile(`console at (http://([0-9.:]+)/console/login)#token=([A-Za-z0-9_-]+)`)
	check := func() {
		mu.Lock()
		m := link.FindStringSubmatch(stderr.String())
		mu.Unlock()
		require.NotNil(t, m, "the login link is printed: %q", stderr.String())
		addr = m[2]
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		c := &http.Client{Jar: jar}
		resp, err := c.Get("http://" + addr + "/console/api/whoami")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the console needs the token")
		resp, err = c.PostForm(m[1], url.Values{"token": {m[3]}})
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Contains(t, string(body), `data-domain="shared"`, "the console lists the domain the shell created")
	}
	m := &Main{
		Stdin: strings.NewReader(""), Stdout: out, Stderr: errOut,
		StdinIsTerminal: func() bool { return true },
		TimeSource:      timesource.NewFake(0),
		LookupEnv:       func(string) (string, bool) { return "", false },
		openEditor: func(completer) (noticeEditor, error) {
			return &hookEditor{typedEditor: typedEditor{lines: []string{"CREATE DOMAIN shared;"}, out: out, expand: func(string) string { return "" }}, last: check}, nil
		},
	}
	require.NoError(t, m.Run(context.Background(), []string{"--console", "127.0.0.1:0"}))
	require.NotEmpty(t, addr)
	_, err := net.Dial("tcp", addr)
	require.Error(t, err, "the console stops with the shell")
}

func TestConsoleFlagRefusals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		terminal bool
		want     string
	}{
		{"with -c", []string{"--console", "127.0.0.1:0", "-c", "LIST DOMAINS;"}, false, "interactive shell"},
		{"piped stdin", []string{"--console", "127.0.0.1:0"}, false, "interactive shell"},
		{"a subcommand", []string{"--console", "127.0.0.1:0", "clock", "--domain", "x"}, true, "interactive shell"},
		{"remote", []string{"--console", "127.0.0.1:0", "--connect", "https://127.0.0.1:1"}, true, "nspl serve"},
		{"not loopback", []string{"--console", "0.0.0.0:0"}, true, "loopback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
				StdinIsTerminal: func() bool { return tc.terminal },
				LookupEnv:       func(string) (string, bool) { return "", false }}
			err := m.Run(context.Background(), tc.args)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrUsage), "a usage error: %v", err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
