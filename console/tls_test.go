package console_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
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

	node := client(c.Material("n1").ClientConfig("", ""))
	status, _ = get(node, "/console/api/whoami")
	require.Equal(t, http.StatusForbidden, status, "a node certificate is not a client")

	anon := c.CA().Client("nobody").ClientConfig("", "")
	anon.Certificates = nil
	browser := client(anon)
	status, _ = get(browser, "/console/api/whoami")
	require.Equal(t, http.StatusUnauthorized, status)
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
}
