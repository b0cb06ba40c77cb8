package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/wire"
	"github.com/stretchr/testify/require"
)

const guessToken = "the-token"

// tokenRequest sends one request with the bearer token tok to path and
// returns its status, Retry-After and body.
func tokenRequest(hc *http.Client, url, path, tok string) (int, string, string, error) {
	method := http.MethodPost
	if path == wire.MetricsPath {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, url+path, strings.NewReader(`{"node":"n9"}`))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	var b []byte
	if resp.StatusCode != http.StatusOK || path != wire.SessionPath {
		b, _ = io.ReadAll(resp.Body)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b), nil
}

// TestEveryTokenRouteIsGuessLimited: every route that takes the bearer
// token (sessions, /metrics, leave and remove) answers 429 with
// Retry-After once an address has sent the per-address limit of wrong
// tokens in a window, the right token too, and admits the right token
// again when the window ends; one wrong guess fewer still admits it.
func TestEveryTokenRouteIsGuessLimited(t *testing.T) {
	for _, path := range []string{wire.MetricsPath, wire.SessionPath, wire.LeavePath, wire.RemovePath} {
		for _, tc := range []struct {
			name  string
			wrong int
			want  bool // the right token is refused after them
		}{
			{"inside", DefaultTokenGuessesPerAddress - 1, false},
			{"at", DefaultTokenGuessesPerAddress, true},
			{"outside", DefaultTokenGuessesPerAddress + 1, true},
		} {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				fake := timesource.NewFake(0)
				url, srv := insecureEnv(t, Config{Token: guessToken, TimeSource: fake})
				hc := h2c()
				t.Cleanup(hc.CloseIdleConnections)
				for i := 0; i < tc.wrong; i++ {
					status, _, _, err := tokenRequest(hc, url, path, "wrong")
					require.NoError(t, err)
					if i < DefaultTokenGuessesPerAddress {
						require.Equal(t, http.StatusUnauthorized, status, "wrong guess %d", i+1)
					} else {
						require.Equal(t, http.StatusTooManyRequests, status, "wrong guess %d", i+1)
					}
				}
				status, retry, body, err := tokenRequest(hc, url, path, guessToken)
				require.NoError(t, err)
				if !tc.want {
					require.NotEqual(t, http.StatusUnauthorized, status)
					require.NotEqual(t, http.StatusTooManyRequests, status)
					return
				}
				require.Equal(t, http.StatusTooManyRequests, status)
				require.Equal(t, "60", retry)
				require.Contains(t, body, "retry in 60 s")
				require.Contains(t, body, "client certificate")
				require.GreaterOrEqual(t, srv.guesses.Counts().RefusedAddress, uint64(1))
				fake.Advance(TokenGuessWindow)
				status, _, _, err = tokenRequest(hc, url, path, guessToken)
				require.NoError(t, err)
				require.NotEqual(t, http.StatusTooManyRequests, status, "a new window admits the right token")
				require.NotEqual(t, http.StatusUnauthorized, status)
			})
		}
	}
}

// TestConcurrentWrongBearerTokensAreCheckedOnce: of 100 concurrent wrong
// tokens on /metrics exactly the per-address limit is compared, and the
// refusals are counted in nspl_token_guesses_refused_total.
func TestConcurrentWrongBearerTokensAreCheckedOnce(t *testing.T) {
	url, srv := insecureEnv(t, Config{Token: guessToken})
	hc := h2c()
	t.Cleanup(hc.CloseIdleConnections)
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[int]int{}
	var errs []error
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _, _, err := tokenRequest(hc, url, wire.MetricsPath, "wrong")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			got[status]++
		}()
	}
	wg.Wait()
	require.Empty(t, errs)
	require.Equal(t, map[int]int{http.StatusUnauthorized: DefaultTokenGuessesPerAddress, http.StatusTooManyRequests: 100 - DefaultTokenGuessesPerAddress}, got)
	// Another address (127.0.0.2 is loopback too) is its own prefix.
	d := &http.Transport{Protocols: h2c().Transport.(*http.Transport).Protocols}
	d.DialContext = localDialer("127.0.0.2")
	other := &http.Client{Transport: d}
	t.Cleanup(other.CloseIdleConnections)
	_, _, text, err := tokenRequest(other, url, wire.MetricsPath, guessToken)
	require.NoError(t, err)
	require.Contains(t, text, `nspl_token_guesses_refused_total{scope="address"} 90`)
	require.Contains(t, text, `nspl_token_guesses_refused_total{scope="global"} 0`)
	require.Contains(t, text, "nspl_token_guesses_wrong_total 10")
	require.Equal(t, uint64(10), srv.guesses.Counts().Wrong)
}

// TestTokenGuessLimitsConfigurable: Limits sets both bounds, and a
// negative one is refused.
func TestTokenGuessLimitsConfigurable(t *testing.T) {
	l, err := Limits{}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, 10, l.TokenGuessesPerAddress)
	require.Equal(t, 100, l.TokenGuesses)
	require.Equal(t, time.Minute, TokenGuessWindow)
	for _, bad := range []Limits{{TokenGuessesPerAddress: -1}, {TokenGuesses: -1}} {
		_, err := bad.withDefaults()
		require.ErrorIs(t, err, ErrConfig)
	}
	url, _ := insecureEnv(t, Config{Token: guessToken, Limits: Limits{TokenGuessesPerAddress: 2}})
	hc := h2c()
	t.Cleanup(hc.CloseIdleConnections)
	for i, want := range []int{http.StatusUnauthorized, http.StatusUnauthorized, http.StatusTooManyRequests} {
		status, _, _, err := tokenRequest(hc, url, wire.MetricsPath, "wrong")
		require.NoError(t, err)
		require.Equal(t, want, status, "guess %d", i+1)
	}
}

// localDialer dials from the loopback address src.
func localDialer(src string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	return d.DialContext
}
