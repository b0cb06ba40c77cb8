package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSGRFilter(t *testing.T) {
	tests := []struct {
		name   string
		mode   colourMode
		writes []string
		want   string
	}{
		{name: "allowed passes everything", mode: colourAllowed, writes: []string{"a\x1b[30;47mb\x1b[0m"}, want: "a\x1b[30;47mb\x1b[0m"},
		{name: "NO_COLOR: the highlight in reverse video", mode: colourNone, writes: []string{"\x1b[J\x1b[30;47mab \x1b[0mac"}, want: "\x1b[J\x1b[7mab \x1b[0mac"},
		{name: "NO_COLOR: other colours dropped, attributes kept", mode: colourNone, writes: []string{"\x1b[31mx\x1b[1;38;5;196my\x1b[1mz\x1b[92mw\x1b[104mv"}, want: "x" + "y\x1b[1mzwv"},
		{name: "dumb: no SGR, cursor moves kept", mode: colourNoAttributes, writes: []string{"\x1b[2A\r\x1b[30;47mab\x1b[0m\x1b[5C"}, want: "\x1b[2A\rab\x1b[5C"},
		{name: "a sequence split across writes", mode: colourNone, writes: []string{"a\x1b", "[30;4", "7mb\x1b[", "0m"}, want: "a\x1b[7mb\x1b[0m"},
		{name: "ESC and another byte", mode: colourNoAttributes, writes: []string{"\x1b7x\x1b8"}, want: "\x1b7x\x1b8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			f := &sgrFilter{w: &b, mode: tc.mode}
			for _, w := range tc.writes {
				n, err := f.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
			}
			require.Equal(t, tc.want, b.String())
		})
	}
}

func TestColourModeFor(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	require.Equal(t, colourAllowed, colourModeFor(env("TERM", "xterm")))
	require.Equal(t, colourAllowed, colourModeFor(env("NO_COLOR", "")), "an empty NO_COLOR is not set")
	require.Equal(t, colourNone, colourModeFor(env("NO_COLOR", "1", "TERM", "xterm")))
	require.Equal(t, colourNoAttributes, colourModeFor(env("TERM", "dumb", "NO_COLOR", "1")))
}
