package console_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/server"
	"github.com/stretchr/testify/require"
)

// metricsSample is what api/metrics answers.
type metricsSample struct {
	UTC        string   `json:"utc_ns"`
	Statements *float64 `json:"statements_total"`
	TickLag    []struct {
		Domain  string  `json:"domain"`
		Seconds float64 `json:"seconds"`
	} `json:"tick_lag"`
}

// TestChartsEndpointIsAuthorized: the charts' endpoint answers the node's
// metrics only to a logged-in caller of the console's own pages: without
// a login it is 401 with no series in its body, from another site's page
// 403 even with the login, and 200 with the sample otherwise, whose
// statement count follows the statements the console ran and whose tick
// lag names the running paced domain.
func TestChartsEndpointIsAuthorized(t *testing.T) {
	e := newEnv(t, server.Config{Token: token})
	get := func(c *http.Client, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, e.url+"/console/api/metrics", nil)
		require.NoError(t, err)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}

	anon := e.browser()
	status, body := get(anon)
	require.Equal(t, http.StatusUnauthorized, status, body)
	require.NotContains(t, body, "statements_total")
	require.NotContains(t, body, "nspl_")
	status, body = get(anon, "Authorization", "Bearer wrong")
	require.Equal(t, http.StatusUnauthorized, status, body)

	c := e.browser()
	e.login(c, token)
	for _, h := range crossSiteHeaders {
		status, body = get(c, h.header[0], h.header[1])
		require.Equal(t, http.StatusForbidden, status, "%s: %s", h.name, body)
		require.NotContains(t, body, "statements_total")
	}

	read := func() metricsSample {
		t.Helper()
		status, body := get(c, "Sec-Fetch-Site", "same-origin")
		require.Equal(t, http.StatusOK, status, body)
		var s metricsSample
		require.NoError(t, json.Unmarshal([]byte(body), &s))
		require.NotEmpty(t, s.UTC)
		require.NotNil(t, s.Statements, "the statement count is charted: %s", body)
		return s
	}
	before := *read().Statements
	csrf := e.csrf(c)
	repl := e.open(c, "/console/api/repl")
	key := repl.hello().Key
	e.exec(c, csrf, key, "CREATE PACED DOMAIN web WITH PERIOD 10ms SKEW 1ms; USE web; START AT NOW;")
	require.Equal(t, before+3, *read().Statements, "the three statements of the statement box are counted")

	deadline := time.Now().Add(30 * time.Second)
	for {
		s := read()
		if len(s.TickLag) == 1 && s.TickLag[0].Domain == "web" {
			break
		}
		require.True(t, time.Now().Before(deadline), "no tick lag of web within the bound: %+v", s)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestButtonsActInTheirOwnSession: START, STOP and DROP run in a session
// of their own, leave the statement box's session as it was, and answer a
// refusal in the console's words, with no position, caret or shell advice.
func TestButtonsActInTheirOwnSession(t *testing.T) {
	e := newEnv(t, server.Config{Token: token})
	c := e.browser()
	e.login(c, token)
	csrf := e.csrf(c)
	act := func(domain, action string) (int, map[string]string) {
		t.Helper()
		b, err := json.Marshal(map[string]string{"domain": domain, "action": action})
		require.NoError(t, err)
		resp := e.post(c, "/console/api/domain", csrf, string(b))
		defer resp.Body.Close()
		var a map[string]string
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		return resp.StatusCode, a
	}
	repl := e.open(c, "/console/api/repl")
	key := repl.hello().Key
	sub := e.exec(c, csrf, key, "CREATE PACED DOMAIN web WITH PERIOD 100ms SKEW 10ms;")
	require.Empty(t, sub.State.Active)

	for _, tc := range []struct {
		domain, action string
		status         int
		field, want    string
	}{
		{"web", "start", http.StatusOK, "message", "started domain 'web'"},
		{"web", "start", http.StatusConflict, "error", "Domain web is already running. Stop it first to start a new generation."},
		{"web", "drop", http.StatusConflict, "error", "Domain web is running: stop it before dropping it."},
		{"web", "stop", http.StatusOK, "message", "stopped domain 'web'"},
		{"web", "stop", http.StatusConflict, "error", "Domain web is already stopped."},
		{"web", "drop", http.StatusOK, "message", "dropped domain 'web'"},
		{"web", "start", http.StatusConflict, "error", "Domain web is not in the catalog any more: it was dropped. Pick a domain from the list."},
		{"a`b", "stop", http.StatusConflict, "error", "Domain `a`b` is not in the catalog any more: it was dropped. Pick a domain from the list."},
		{"web", "restart", http.StatusBadRequest, "error", `the action is one of "start", "stop" and "drop"`},
		{"", "start", http.StatusBadRequest, "error", "name the domain, at most 1024 bytes"},
	} {
		status, a := act(tc.domain, tc.action)
		require.Equal(t, tc.status, status, "%s %s: %v", tc.action, tc.domain, a)
		require.Equal(t, tc.want, a[tc.field], "%s %s", tc.action, tc.domain)
		for _, shell := range []string{"LIST DOMAINS", "STOP it", "^", "1:"} {
			require.NotContains(t, a["error"], shell, "no shell advice nor position in a button's refusal")
		}
	}
	// The statement box's session is untouched: no USE ran in it.
	sub = e.exec(c, csrf, key, "SHOW TRANSACTIONS;")
	require.Empty(t, sub.State.Active)

	// A button needs the page's CSRF token.
	resp := e.post(c, "/console/api/domain", "", `{"domain":"web","action":"start"}`)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.False(t, strings.Contains(resp.Header.Get("Content-Type"), "json"))
}
