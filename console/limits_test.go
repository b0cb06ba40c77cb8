package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/console"
	"github.com/nspl-dev/nspl/server"
	"github.com/stretchr/testify/require"
)

// postLogin posts one login without failing the test from a goroutine; it
// returns the status, the Retry-After header and the error.
func (e *env) postLogin(c *http.Client, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, e.url+"/console/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

// TestConcurrentWrongLoginsAreCheckedOnce: a login's token is checked and
// counted in one step, after its body is read: of 100 concurrent wrong
// logins from one address exactly the limit's 10 are compared (401) and
// the rest refused uncompared (429, with Retry-After).
func TestConcurrentWrongLoginsAreCheckedOnce(t *testing.T) {
	e := newEnv(t, server.Config{Token: token})
	c := e.browser()
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[int]int{}
	var errs []error
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, retry, err := e.postLogin(c, "wrong")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			if status == http.StatusTooManyRequests && retry == "" {
				errs = append(errs, errNoRetryAfter)
			}
			got[status]++
		}()
	}
	wg.Wait()
	require.Empty(t, errs)
	require.Equal(t, map[int]int{http.StatusUnauthorized: 10, http.StatusTooManyRequests: 90}, got)
}

type testError string

func (e testError) Error() string { return string(e) }

const errNoRetryAfter = testError("a 429 without Retry-After")

// TestLoginAndBearerShareOneLimit: wrong tokens on the API's bearer check
// and on the console's login count against one limit.
func TestLoginAndBearerShareOneLimit(t *testing.T) {
	e := newEnv(t, server.Config{Token: token})
	bearer := func(tok string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, e.url+"/metrics", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}
	c := e.browser()
	for i := 0; i < 5; i++ {
		require.Equal(t, http.StatusUnauthorized, bearer("wrong").StatusCode)
		status, _, err := e.postLogin(c, "wrong")
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, status)
	}
	status, retry, err := e.postLogin(c, token)
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, status, "the eleventh guess, the right one, from a spent address")
	require.NotEmpty(t, retry)
	resp := bearer(token)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
}

// TestReplCapHoldsUnderConcurrentOpens: one login opening 40 statement
// sessions at once gets exactly MaxReplSessions of them, round after round.
func TestReplCapHoldsUnderConcurrentOpens(t *testing.T) {
	require.Equal(t, 16, console.MaxReplSessions)
	e := newEnv(t, server.Config{Token: token, Limits: server.Limits{MaxSessionsPerIdentity: 100}})
	c := e.browser()
	require.Equal(t, http.StatusSeeOther, e.login(c, token).StatusCode)
	for round := 0; round < 8; round++ {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var mu sync.Mutex
		got := map[int]int{}
		var bodies []*http.Response
		var errs []error
		for i := 0; i < 40; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/console/api/repl", nil)
				if err == nil {
					var resp *http.Response
					resp, err = c.Do(req)
					if err == nil {
						mu.Lock()
						got[resp.StatusCode]++
						bodies = append(bodies, resp)
						mu.Unlock()
						return
					}
				}
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}()
		}
		wg.Wait()
		require.Empty(t, errs, "round %d", round)
		require.Equal(t, map[int]int{http.StatusOK: console.MaxReplSessions, http.StatusTooManyRequests: 40 - console.MaxReplSessions}, got, "round %d", round)
		cancel()
		for _, b := range bodies {
			_ = b.Body.Close()
		}
		require.Eventually(t, func() bool { return e.srv.Sessions() == 0 }, wait, 2*time.Millisecond, "round %d: the sessions end", round)
	}
}
