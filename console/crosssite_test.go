package console_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/server"
	"github.com/stretchr/testify/require"
)

// crossSiteHeaders are the requests of a page on another site: a browser
// that sends Sec-Fetch-Site, and one that sends only an Origin.
var crossSiteHeaders = []struct {
	name   string
	header [2]string
}{
	{"cross-site", [2]string{"Sec-Fetch-Site", "cross-site"}},
	{"same-site", [2]string{"Sec-Fetch-Site", "same-site"}},
	{"another origin", [2]string{"Origin", "https://evil.example"}},
}

// TestCrossSiteStreamOpensAreRefused: a page of another site opens none of
// the console's event streams, nor reads whoami, whoever the caller is: a
// client certificate (which the browser presents to any site's request)
// as well as a login cookie. Before the check, a certificate's caller was
// admitted cross-site, spending its session share and attaching clocks.
func TestCrossSiteStreamOpensAreRefused(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{})
	m := c.Start("n1", true)
	api := c.ServeAPI(m, testcluster.APIOptions{Console: true})
	alice := &http.Client{Transport: &http.Transport{TLSClientConfig: c.ClientTLS("alice"), ForceAttemptHTTP2: true}}
	defer alice.CloseIdleConnections()
	status := func(path string, header [2]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, api.URL+path, nil)
		require.NoError(t, err)
		if header[0] != "" {
			req.Header.Set(header[0], header[1])
		}
		resp, err := alice.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			return resp.StatusCode, "" // an open stream: do not wait for its end
		}
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	paths := []string{"/console/api/watch", "/console/api/clock?domain=x", "/console/api/repl", "/console/api/whoami", "/console/api/metrics"}
	for _, path := range paths {
		for _, tc := range crossSiteHeaders {
			t.Run(path+" "+tc.name, func(t *testing.T) {
				got, body := status(path, tc.header)
				require.Equal(t, http.StatusForbidden, got, body)
				require.Contains(t, body, "came from another site")
			})
		}
	}
	require.Zero(t, api.Sessions(), "no refused stream took a session")
	for _, path := range paths {
		for _, h := range [][2]string{{"Sec-Fetch-Site", "same-origin"}, {"Origin", api.URL}, {}} {
			got, body := status(path, h)
			require.Equal(t, http.StatusOK, got, "%s %v: %s", path, h, body)
		}
	}
}

// TestCrossSiteStreamOpensAreRefusedForLogins: the same for a login
// cookie's caller on a loopback listener.
func TestCrossSiteStreamOpensAreRefusedForLogins(t *testing.T) {
	e := newEnv(t, server.Config{Token: token})
	b := e.browser()
	e.login(b, token)
	for _, tc := range crossSiteHeaders {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, e.url+"/console/api/repl", nil)
			require.NoError(t, err)
			req.Header.Set(tc.header[0], tc.header[1])
			resp, err := b.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
		})
	}
	require.Zero(t, e.srv.Sessions())
	repl := e.open(b, "/console/api/repl")
	require.NotEmpty(t, repl.hello().Key, "a request from no page (no headers) is admitted")
}

// TestRebindingCannotRunStatements: a page of another site whose name
// resolves to the loopback listener (DNS rebinding) sends the browser's
// same-origin headers under its own Host; the listener misdirects it, so
// it reads no CSRF token and runs nothing. Before the Host check it got
// the token and a statement session, and exec created a domain.
func TestRebindingCannotRunStatements(t *testing.T) {
	e := newEnv(t, server.Config{})
	port := e.url[strings.LastIndexByte(e.url, ':')+1:]
	evil := "evil.example:" + port
	c := e.browser()
	for _, path := range []string{"/console/api/whoami", "/console/api/repl", "/console/"} {
		req, err := http.NewRequest(http.MethodGet, e.url+path, nil)
		require.NoError(t, err)
		req.Host = evil
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := c.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, path)
		require.NotContains(t, string(b), "csrf", path)
	}
	repl := e.open(c, "/console/api/repl")
	key := repl.hello().Key
	csrf := e.csrf(c)
	req, err := http.NewRequest(http.MethodPost, e.url+"/console/api/exec", strings.NewReader(`{"key":"`+key+`","text":"CREATE DOMAIN x;"}`))
	require.NoError(t, err)
	req.Host = evil
	req.Header.Set("Origin", "http://"+evil)
	req.Header.Set("X-CSRF-Token", csrf)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)
	_, err = e.node.Domain("x")
	require.Error(t, err, "nothing ran")
}
