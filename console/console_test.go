package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/server"
	"github.com/stretchr/testify/require"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// env is one in-memory node serving the console over plain HTTP on
// loopback, as nspl --console does.
type env struct {
	t    *testing.T
	url  string
	srv  *server.Server
	node *node.Node
}

func newEnv(t *testing.T, cfg server.Config) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := node.Open(ctx, node.Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError})
	require.NoError(t, err)
	cfg.Node, cfg.Insecure, cfg.Logger, cfg.Console = n, true, quietLogger(), true
	srv, err := server.New(cfg)
	require.NoError(t, err)
	ln, err := srv.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Close()) })
	testserve.Serve(t, ln, srv.Serve, srv.Close)
	return &env{t: t, url: "http://" + ln.Addr().String(), srv: srv, node: n}
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, as the tests read them.
func (e *env) browser() *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// login logs c in with token and returns the response.
func (e *env) login(c *http.Client, token string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/console/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := c.Do(req)
	require.NoError(e.t, err)
	_ = resp.Body.Close()
	return resp
}

// whoami returns the caller's CSRF token, failing if c is not logged in.
func (e *env) csrf(c *http.Client) string {
	e.t.Helper()
	resp, err := c.Get(e.url + "/console/api/whoami")
	require.NoError(e.t, err)
	defer resp.Body.Close()
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
	var w struct{ CSRF string }
	require.NoError(e.t, json.NewDecoder(resp.Body).Decode(&w))
	require.NotEmpty(e.t, w.CSRF)
	return w.CSRF
}

// post sends a same-origin POST of a JSON body with the CSRF header.
func (e *env) post(c *http.Client, path, csrf, body string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	resp, err := c.Do(req)
	require.NoError(e.t, err)
	return resp
}

// event is one Server-Sent Event.
type event struct {
	name string
	data string
}

// stream reads one event stream.
type stream struct {
	t      *testing.T
	resp   *http.Response
	events chan event
	cancel context.CancelFunc
}

// open opens the event stream at path, failing unless it answers 200.
func (e *env) open(c *http.Client, path string) *stream {
	e.t.Helper()
	s, status := e.tryOpen(c, path)
	require.Equal(e.t, http.StatusOK, status, "open %s", path)
	return s
}

// tryOpen opens the event stream at path; a refusal returns its status and
// a nil stream.
func (e *env) tryOpen(c *http.Client, path string) (*stream, int) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+path, nil)
	require.NoError(e.t, err)
	resp, err := c.Do(req)
	require.NoError(e.t, err)
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		cancel()
		return nil, resp.StatusCode
	}
	s := &stream{t: e.t, resp: resp, events: make(chan event, 1024), cancel: cancel}
	done := make(chan struct{})
	go func() { // owned: ends when the body ends, at close at the latest
		defer close(done)
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					s.events <- ev
				}
				ev = event{}
			case strings.HasPrefix(line, "event: "):
				ev.name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[len("data: "):]
			}
		}
	}()
	e.t.Cleanup(func() {
		cancel()
		_ = resp.Body.Close()
		<-done
	})
	return s, http.StatusOK
}

// next returns the next event named one of names, skipping others, and
// fails if the stream ends first or nothing comes within the bound (a
// bound on a broken stream, not a measure of speed).
func (s *stream) next(names ...string) event {
	s.t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatalf("the stream ended waiting for %v", names)
			}
			for _, n := range names {
				if ev.name == n {
					return ev
				}
			}
		case <-timeout.C:
			s.t.Fatalf("no %v event within the bound", names)
		}
	}
}

// until returns the first event named name whose data satisfies ok.
func (s *stream) until(name string, ok func(data string) bool) event {
	s.t.Helper()
	for {
		ev := s.next(name)
		if ok(ev.data) {
			return ev
		}
	}
}

// ended waits for the stream to end.
func (s *stream) ended() {
	s.t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-timeout.C:
			s.t.Fatal("the stream did not end within the bound")
		}
	}
}

// close ends the stream from the client's side.
func (s *stream) close() {
	s.cancel()
	_ = s.resp.Body.Close()
}

// hello is a stream's first event's data.
type hello struct {
	Node     string `json:"node"`
	UTC      string `json:"utc_ns"`
	Identity string `json:"identity"`
	Key      string `json:"key"`
}

func (s *stream) hello() hello {
	s.t.Helper()
	var h hello
	require.NoError(s.t, json.Unmarshal([]byte(s.next("hello").data), &h))
	return h
}

// exec runs text in the statement session key and decodes the answer.
func (e *env) exec(c *http.Client, csrf, key, text string) submission {
	e.t.Helper()
	b, err := json.Marshal(map[string]string{"key": key, "text": text})
	require.NoError(e.t, err)
	resp := e.post(c, "/console/api/exec", csrf, string(b))
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusOK, resp.StatusCode, "exec %q: %s", text, body)
	var sub submission
	require.NoError(e.t, json.Unmarshal(body, &sub))
	return sub
}

type submission struct {
	Outcomes []outcome `json:"outcomes"`
	State    struct {
		Active string `json:"active"`
	} `json:"state"`
}

type outcome struct {
	Statement string `json:"statement"`
	Message   string `json:"message"`
	Table     *struct {
		Columns []string    `json:"columns"`
		Rows    [][]*string `json:"rows"`
	} `json:"table"`
	Error *struct {
		Message string `json:"message"`
		Code    string `json:"code"`
		Line    int    `json:"line"`
		Column  int    `json:"column"`
		Source  string `json:"source"`
		Caret   string `json:"caret"`
	} `json:"error"`
}
