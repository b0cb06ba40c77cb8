package server

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/wire"
)

// TestStatementsAreCounted: nspl_statements_total counts the statements
// the session protocol ran, which the console's charts draw as a rate.
func TestStatementsAreCounted(t *testing.T) {
	url, _ := insecureEnv(t, Config{})
	hc := h2c()
	defer hc.CloseIdleConnections()
	require.Contains(t, metricsText(t, hc, url), "nspl_statements_total{outcome=\"ok\"} 0\n")
	ts := openSession(t, hc, url)
	ts.write(`{"type":"exec","id":1,"text":"CREATE DOMAIN a;"}` + "\n")
	for m := ts.read(); m.ID != 1 || m.Type == wire.TypeFrame; m = ts.read() {
	}
	ts.write(`{"type":"exec","id":2,"text":"LIST DOMAINS;"}` + "\n")
	for m := ts.read(); m.ID != 2 || m.Type == wire.TypeFrame || m.Type == wire.TypeRows; m = ts.read() {
	}
	require.Contains(t, metricsText(t, hc, url), "nspl_statements_total{outcome=\"ok\"} 2\n")
}
