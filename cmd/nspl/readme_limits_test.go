package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	clockrt "github.com/nspl-dev/nspl/clockrt"
)

// TestREADMELimitsMatchServeDefaults keeps the README's table of limits
// true: every row that names an nspl serve flag states that flag's real
// default.
func TestREADMELimitsMatchServeDefaults(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	o, err := parseArgs([]string{"serve", "--node", "n1", "--api-addr", "127.0.0.1:8001", "--pki", "certs", "--raft-addr", "127.0.0.1:7001", "--bootstrap"})
	require.NoError(t, err)
	s := o.serve
	dur := func(d time.Duration) string { // 2m0s is written 2m
		out := d.String()
		if strings.HasSuffix(out, "m0s") {
			out = strings.TrimSuffix(out, "0s")
		}
		return out
	}
	defaults := map[string]string{
		"--handshake-timeout":                dur(s.limits.HandshakeTimeout),
		"--idle-timeout":                     dur(s.limits.IdleTimeout),
		"--session-idle-timeout":             dur(s.limits.SessionIdleTimeout),
		"--message-timeout":                  dur(s.limits.MessageTimeout),
		"--max-sessions":                     fmt.Sprint(s.maxSessions),
		"--max-sessions-per-identity":        fmt.Sprint(s.limits.MaxSessionsPerIdentity),
		"--max-archive-uploads":              fmt.Sprint(s.maxArchiveUploads),
		"--max-archive-uploads-per-identity": fmt.Sprint(s.maxUploadsPerID),
		"--upload-timeout":                   dur(s.limits.UploadTimeout),
		"--max-token-guesses-per-address":    fmt.Sprint(s.limits.TokenGuessesPerAddress),
		"--max-token-guesses":                fmt.Sprint(s.limits.TokenGuesses),
		"--max-clock-offset":                 dur(s.maxClockOffset),
		"--max-domains":                      fmt.Sprint(s.maxDomains),
		"--drain-timeout":                    dur(s.drainTimeout),
		"--max-transaction-steps":            fmt.Sprint(s.transactions.MaxTransactionSteps),
		"--max-transaction-bytes":            fmt.Sprint(s.transactions.MaxTransactionBytes),
		"--transaction-idle-timeout":         dur(s.transactions.TransactionIdleTimeout),
	}
	row := regexp.MustCompile("(?m)^\\| [^|]+ \\| `(--[a-z-]+)` \\| ([^|]+) \\|")
	seen := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		want, ok := defaults[m[1]]
		require.True(t, ok, "README's limits table names %s, which this test does not know", m[1])
		require.Equal(t, want, strings.TrimSpace(m[2]), "README's default of %s", m[1])
		seen[m[1]] = true
	}
	for flag := range defaults {
		require.True(t, seen[flag], "README's limits table has no row for %s", flag)
	}
}

// TestREADMELimitsMatchFixedBounds keeps the rows of the README's table of
// limits that have no flag true to the constants that set them.
func TestREADMELimitsMatchFixedBounds(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	fixed := map[string]string{
		"wall time between two ticks of one paced domain": clockrt.MinTickInterval.String(),
	}
	for limit, want := range fixed {
		row := regexp.MustCompile("(?m)^\\| " + regexp.QuoteMeta(limit) + " \\| — \\| ([^|]+) \\|")
		m := row.FindStringSubmatch(string(b))
		require.NotNil(t, m, "README's limits table has no row %q", limit)
		require.Equal(t, want, strings.TrimSpace(m[1]), "README's bound of %q", limit)
	}
}
