package console_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/server"
	"github.com/stretchr/testify/require"
)

const token = "s3cret-token"

// TestLoginSetsASignedCookie: the right token sets an HttpOnly,
// SameSite=Strict cookie that admits the pages; a wrong one is refused and
// sets nothing; a page without a login is sent to the login form and an
// API call answered 401.
func TestLoginSetsASignedCookie(t *testing.T) {
	e := newEnv(t, server.Config{Token: token})
	c := e.browser()

	resp, err := c.Get(e.url + "/console/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/console/login", resp.Header.Get("Location"))
	resp, err = c.Get(e.url + "/console/api/watch")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	resp = e.login(c, "wrong")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Empty(t, resp.Cookies())

	resp = e.login(c, token)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/console/", resp.Header.Get("Location"))
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	ck := cookies[0]
	require.True(t, ck.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	require.Equal(t, "/", ck.Path)

	resp, err = c.Get(e.url + "/console/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")

	// A cookie whose signature does not match is no login.
	forged := e.browser()
	u, _ := url.Parse(e.url)
	v := []byte(ck.Value)
	v[3] ^= 1
	forged.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: string(v)}})
	resp, err = forged.Get(e.url + "/console/api/whoami")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// TestLogoutEndsTheLogin: logout needs the CSRF token; after it the same
// cookie, replayed, is refused, and the login's statement session ends.
func TestLogoutEndsTheLogin(t *testing.T) {
	e := newEnv(t, server.Config{Token: token})
	c := e.browser()
	e.login(c, token)
	csrf := e.csrf(c)
	u, _ := url.Parse(e.url)
	saved := c.Jar.Cookies(u)
	repl := e.open(c, "/console/api/repl")
	repl.hello()

	resp := e.post(c, "/console/logout", "", "")
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "no CSRF token")

	req, err := http.NewRequest(http.MethodPost, e.url+"/console/logout", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err = c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/console/login", resp.Header.Get("Location"))
	repl.ended()

	replay := e.browser()
	replay.Jar.SetCookies(u, saved)
	resp, err = replay.Get(e.url + "/console/api/whoami")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a logged-out cookie is refused")
}

// TestStateChangesNeedTheCSRFTokenAndTheOrigin: exec is refused without the
// login's CSRF token, with another login's, and from another site.
func TestStateChangesNeedTheCSRFTokenAndTheOrigin(t *testing.T) {
	e := newEnv(t, server.Config{Token: token})
	a, b := e.browser(), e.browser()
	e.login(a, token)
	e.login(b, token)
	csrfA, csrfB := e.csrf(a), e.csrf(b)
	require.NotEqual(t, csrfA, csrfB, "each login has its own CSRF token")
	repl := e.open(a, "/console/api/repl")
	key := repl.hello().Key
	body := `{"key":"` + key + `","text":"CREATE DOMAIN x;"}`

	for _, tc := range []struct {
		name, csrf string
		header     [2]string
	}{
		{"no token", "", [2]string{}},
		{"another login's token", csrfB, [2]string{}},
		{"a cross-site request", csrfA, [2]string{"Sec-Fetch-Site", "cross-site"}},
		{"another origin", csrfA, [2]string{"Origin", "https://evil.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, e.url+"/console/api/exec", strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("X-CSRF-Token", tc.csrf)
			if tc.header[0] != "" {
				req.Header.Set(tc.header[0], tc.header[1])
			}
			resp, err := a.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
		})
	}
	_, err := e.node.Domain("x")
	require.Error(t, err, "nothing ran")

	// Another login may not run statements in a's session, even with its
	// own CSRF token.
	resp := e.post(b, "/console/api/exec", csrfB, body)
	resp.Body.Close()
	require.Equal(t, http.StatusConflict, resp.StatusCode)

	sub := e.exec(a, csrfA, key, "CREATE DOMAIN x;")
	require.Equal(t, "created domain 'x'", sub.Outcomes[0].Message)
}

// TestWrongTokensAreRateLimited: an address that sends too many wrong
// tokens within a minute is refused even the right one for the rest of it.
func TestWrongTokensAreRateLimited(t *testing.T) {
	e := newEnv(t, server.Config{Token: token})
	c := e.browser()
	for i := 0; i < 10; i++ {
		require.Equal(t, http.StatusUnauthorized, e.login(c, "wrong").StatusCode, "attempt %d", i+1)
	}
	require.Equal(t, http.StatusTooManyRequests, e.login(c, token).StatusCode)
}

// TestConsoleSessionsTakeTheIdentitysShare: each event stream is a session
// of its caller's identity, refused past the server's per-identity share,
// and its slot is free again once it ends.
func TestConsoleSessionsTakeTheIdentitysShare(t *testing.T) {
	e := newEnv(t, server.Config{Token: token, Limits: server.Limits{MaxSessionsPerIdentity: 2}})
	c := e.browser()
	e.login(c, token)
	first := e.open(c, "/console/api/watch")
	first.hello()
	second := e.open(c, "/console/api/repl")
	second.hello()
	_, status := e.tryOpen(c, "/console/api/clock?domain=x")
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Equal(t, 2, e.srv.Sessions())
	first.close()
	require.Eventually(t, func() bool { return e.srv.Sessions() == 1 }, wait, 2*time.Millisecond)
	third := e.open(c, "/console/api/watch")
	third.hello()
}

// TestArchivesAreRefused: a statement box cannot make the server read or
// write a file.
func TestArchivesAreRefused(t *testing.T) {
	e := newEnv(t, server.Config{})
	c := e.browser()
	csrf := e.csrf(c)
	repl := e.open(c, "/console/api/repl")
	key := repl.hello().Key
	for _, stmt := range []string{"BACKUP CLUSTER TO '/tmp/x.nsplbak';", "DESCRIBE BACKUP '/etc/passwd';", "RESTORE CLUSTER FROM '/etc/passwd';"} {
		sub := e.exec(c, csrf, key, stmt)
		require.Len(t, sub.Outcomes, 1)
		require.NotNil(t, sub.Outcomes[0].Error, stmt)
		require.Contains(t, sub.Outcomes[0].Error.Message, "reads and writes no archive file", stmt)
	}
}

// TestDeepLinkSurvivesLogin: a page asked for without a login is sent to
// the login form with itself as the return, the form carries it, and the
// login lands on it; a return to another site is refused, and the login
// lands on the domains page instead.
func TestDeepLinkSurvivesLogin(t *testing.T) {
	e := newEnv(t, server.Config{Token: token})
	c := e.browser()
	resp, err := c.Get(e.url + "/console/?domain=prod")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	loc := resp.Header.Get("Location")
	require.Equal(t, "/console/login?next=%2Fconsole%2F%3Fdomain%3Dprod", loc)

	resp, err = c.Get(e.url + loc)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(page), `name="next" value="/console/?domain=prod"`)

	loginTo := func(c *http.Client, tok, next string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, e.url+"/console/login", strings.NewReader(url.Values{"token": {tok}, "next": {next}}.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := c.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Header.Set("X-Body", string(b))
		return resp
	}
	// A wrong token keeps the return in the form shown again.
	resp = loginTo(c, "wrong", "/console/?domain=prod")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, resp.Header.Get("X-Body"), `name="next" value="/console/?domain=prod"`)

	resp = loginTo(c, token, "/console/?domain=prod")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/console/?domain=prod", resp.Header.Get("Location"))
	// Logged in, the login form sends the browser on to its return.
	resp, err = c.Get(e.url + "/console/login?next=%2Fconsole%2Fcluster")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/console/cluster", resp.Header.Get("Location"))

	// An open redirect is refused: the login lands on the console.
	for _, evil := range []string{"https://evil.example/console/", "//evil.example/console/", "/\\evil.example/", "/console/api/whoami"} {
		resp = loginTo(e.browser(), token, evil)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, evil)
		require.Equal(t, "/console/", resp.Header.Get("Location"), evil)
		resp, err = c.Get(e.url + "/console/login?next=" + url.QueryEscape(evil))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, "/console/", resp.Header.Get("Location"), evil)
	}
}
