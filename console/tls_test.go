package console_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/stretchr/testify/require"
)

// TestConsoleOverTLS: over TLS a client certificate of the cluster CA is
// admitted without a login, a node certificate is refused, and the token
// login's cookie is Secure and named with the __Host- prefix.
func TestConsoleOverTLS(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{})
	m := c.Start("n1", true)
	api := c.ServeAPI(m, testcluster.APIOptions{Token: token, Console: true})
	client := func(tc *tls.Config) *http.Client {
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		return &http.Client{Jar: jar, Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	get := func(hc *http.Client, path string) (int, string) {
		resp, err := hc.Get(api.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}

	alice := client(c.ClientTLS("alice"))
	status, body := get(alice, "/console/api/whoami")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `"identity":"nspl-client://alice"`)
	status, body = get(alice, "/console/")
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, body, "Log out", "a certificate has no login to end")
	require.Contains(t, body, ">Signed in as alice (client certificate)<", "the header says how the caller signed in")

	node := client(c.Material("n1").ClientConfig("", ""))
	status, _ = get(node, "/console/api/whoami")
	require.Equal(t, http.StatusForbidden, status, "a node certificate is not a client")
	status, body = get(node, "/console/api/metrics")
	require.Equal(t, http.StatusForbidden, status, "a node certificate reads no metrics through the console")
	require.NotContains(t, body, "statements_total")
	status, body = get(alice, "/console/api/metrics")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"statements_total":`)

	anon := c.CA().Client("nobody").ClientConfig("", "")
	anon.Certificates = nil
	browser := client(anon)
	status, _ = get(browser, "/console/api/whoami")
	require.Equal(t, http.StatusUnauthorized, status)
	status, body = get(browser, "/console/api/metrics")
	require.Equal(t, http.StatusUnauthorized, status)
	require.NotContains(t, body, "statements_total")
	req, err := http.NewRequest(http.MethodPost, api.URL+"/console/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := browser.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	ck := resp.Cookies()
	require.Len(t, ck, 1)
	require.Equal(t, "__Host-nspl_console", ck[0].Name)
	require.True(t, ck[0].Secure)
	require.True(t, ck[0].HttpOnly)
	status, body = get(browser, "/console/api/whoami")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `"identity":"bearer-token"`)
	status, body = get(browser, "/console/")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, ">Signed in with the node&#39;s token<")
	require.NotContains(t, body, ">bearer-token<")
}

// TestLogoutOutlivesARestart: with a logout file, a copied cookie of a
// logged-out login is still refused after the node's API restarts, while a
// login that did not log out survives the restart. Without one the
// refusal is in memory and ends with the process.
func TestLogoutOutlivesARestart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    bool
		refused bool
	}{
		{name: "kept in the data directory", file: true, refused: true},
		{name: "kept in memory", file: false, refused: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testcluster.New(t, testcluster.Options{})
			m := c.Start("n1", true)
			o := testcluster.APIOptions{Token: token, Console: true}
			if tc.file {
				o.ConsoleLogoutFile = filepath.Join(t.TempDir(), "console-logouts.json")
			}
			api := c.ServeAPI(m, o)
			tlsc := c.CA().Client("nobody").ClientConfig("", "")
			tlsc.Certificates = nil
			// A browser's connection ends with the node, so each run of the
			// API gets a client of its own.
			var hc *http.Client
			connect := func() {
				tr := &http.Transport{TLSClientConfig: tlsc, ForceAttemptHTTP2: true}
				t.Cleanup(tr.CloseIdleConnections)
				hc = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			}
			connect()
			// do sends one request and returns its status, cookies and body.
			do := func(cookie *http.Cookie, method, path string, form url.Values) (int, []*http.Cookie, []byte) {
				req, err := http.NewRequest(method, api.URL+path, strings.NewReader(form.Encode()))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Sec-Fetch-Site", "same-origin")
				if cookie != nil {
					req.AddCookie(cookie)
				}
				resp, err := hc.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				return resp.StatusCode, resp.Cookies(), body
			}
			login := func() *http.Cookie {
				status, cookies, _ := do(nil, http.MethodPost, "/console/login", url.Values{"token": {token}})
				require.Equal(t, http.StatusSeeOther, status)
				require.Len(t, cookies, 1)
				return cookies[0]
			}
			whoami := func(cookie *http.Cookie) (int, string) {
				status, _, body := do(cookie, http.MethodGet, "/console/api/whoami", nil)
				var w struct{ CSRF string }
				if status == http.StatusOK {
					require.NoError(t, json.Unmarshal(body, &w))
				}
				return status, w.CSRF
			}
			out, stays := login(), login()
			status, csrf := whoami(out)
			require.Equal(t, http.StatusOK, status)
			status, _, _ = do(out, http.MethodPost, "/console/logout", url.Values{"csrf": {csrf}})
			require.Equal(t, http.StatusSeeOther, status)
			status, _ = whoami(out)
			require.Equal(t, http.StatusUnauthorized, status, "logged out before the restart")

			api.Close()
			o.Addr = api.Addr
			api = c.ServeAPI(m, o)
			connect()
			status, _ = whoami(stays)
			require.Equal(t, http.StatusOK, status, "a login survives the restart")
			status, _ = whoami(out)
			if tc.refused {
				require.Equal(t, http.StatusUnauthorized, status, "the logged-out cookie after the restart")
			} else {
				require.Equal(t, http.StatusOK, status, "a refusal held in memory ends with the process")
			}
		})
	}
}
