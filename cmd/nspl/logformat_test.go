package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// nspl serve --log-format picks the encoding of its stderr logs, text by
// default; the level --verbose sets holds in either.
func TestServeLogFormat(t *testing.T) {
	base := []string{"--node", "n1", "--api-addr", "127.0.0.1:7000", "--insecure"}
	cases := []struct {
		name  string
		args  []string
		err   string
		check func(t *testing.T, out string)
	}{
		{name: "text by default", check: func(t *testing.T, out string) {
			require.Contains(t, out, `level=ERROR msg="listen failed" addr=:1`)
		}},
		{name: "json", args: []string{"--log-format", "json"}, check: func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.Len(t, lines, 1, "the info line is below the default level")
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(lines[0]), &m))
			require.Equal(t, "ERROR", m["level"])
			require.Equal(t, "listen failed", m["msg"])
			require.Equal(t, ":1", m["addr"])
		}},
		{name: "json verbose", args: []string{"--log-format", "json", "--verbose"}, check: func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.Len(t, lines, 2)
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(lines[0]), &m))
			require.Equal(t, "DEBUG", m["level"])
		}},
		{name: "unknown", args: []string{"--log-format", "xml"}, err: `--log-format "xml": give text or json`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseServeArgs(options{}, append(append([]string(nil), base...), c.args...))
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			var stderr bytes.Buffer
			logger := (&Main{Stderr: &stderr}).serveLogger(o.serve)
			logger.Debug("probe")
			logger.Error("listen failed", "addr", ":1")
			c.check(t, stderr.String())
		})
	}
}
