package console_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/nspl-dev/nspl/console"
	"github.com/nspl-dev/nspl/server"
	"github.com/stretchr/testify/require"
)

// cutReply is an exec answer with what it cut.
type cutReply struct {
	Outcomes []outcome `json:"outcomes"`
	Cut      *struct {
		Statement int    `json:"statement"`
		Line      int    `json:"line"`
		Column    int    `json:"column"`
		Limit     string `json:"limit"`
		Ran       bool   `json:"ran"`
		Message   string `json:"message"`
	} `json:"cut"`
	State struct {
		Active string `json:"active"`
	} `json:"state"`
}

// execRaw posts text to the statement session key and returns the raw
// answer, which must be 200.
func (e *env) execRaw(c *http.Client, csrf, key, text string) []byte {
	e.t.Helper()
	b, err := json.Marshal(map[string]string{"key": key, "text": text})
	require.NoError(e.t, err)
	resp := e.post(c, "/console/api/exec", csrf, string(b))
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusOK, resp.StatusCode, "%s", body)
	return body
}

// replBox is a logged-in statement box: its client, CSRF token, stream
// and key.
type replBox struct {
	c      *http.Client
	csrf   string
	stream *stream
	key    string
}

func (e *env) replBox() replBox {
	e.t.Helper()
	c := e.browser()
	csrf := e.csrf(c)
	s := e.open(c, "/console/api/repl")
	return replBox{c: c, csrf: csrf, stream: s, key: s.hello().Key}
}

// TestOneSubmissionsWorkIsBounded reproduces the finding: 5,041 LIST
// DOMAINS; in one 64 KiB submission over many domains answered tens of
// MiB, all of it held until the reply was written. Now the submission
// stops once its outcomes reach MaxReplyBytes, the answer stays within
// that (plus its framing) and says which statement stopped it and why, and
// the statement box's stream carries no more than the answer does.
func TestOneSubmissionsWorkIsBounded(t *testing.T) {
	e := newEnv(t, server.Config{})
	box := e.replBox()
	var create strings.Builder
	const domains = 200
	for i := range domains {
		fmt.Fprintf(&create, "CREATE DOMAIN d%03d;", i)
	}
	var made cutReply
	require.NoError(t, json.Unmarshal(e.execRaw(box.c, box.csrf, box.key, create.String()), &made))
	require.Len(t, made.Outcomes, domains)
	require.Nil(t, made.Cut)

	box.stream.next("state") // the creating submission's

	// The stream is read as the page reads it, all the while.
	type tally struct{ outcomes, bytes int }
	drained := make(chan tally, 1)
	go func() { // owned: ends at the submission's state event or the stream's end
		var n tally
		for ev := range box.stream.events {
			switch ev.name {
			case "outcome":
				n.outcomes++
				n.bytes += len(ev.data)
			case "state":
				drained <- n
				return
			}
		}
		drained <- tally{-1, -1}
	}()
	text := strings.Repeat("LIST DOMAINS;", 5041)
	require.LessOrEqual(t, len(text), console.MaxStatementBytes)
	raw := e.execRaw(box.c, box.csrf, box.key, text)
	streamed := <-drained
	t.Logf("answer %d bytes; stream %d outcomes, %d bytes", len(raw), streamed.outcomes, streamed.bytes)
	require.LessOrEqual(t, len(raw), console.MaxReplyBytes+4096, "the answer is bounded")
	require.LessOrEqual(t, streamed.bytes, console.MaxReplyBytes+4096, "the stream is bounded")
	var got cutReply
	require.NoError(t, json.Unmarshal(raw, &got))
	require.NotNil(t, got.Cut, "the answer says what it cut")
	require.Equal(t, "reply_bytes", got.Cut.Limit)
	require.True(t, got.Cut.Ran, "the statement that crossed the bound ran; its outcome is not shown")
	ran := len(got.Outcomes) - 1 // the last outcome is the cut's
	require.Greater(t, ran, 0)
	require.Less(t, ran, 5041)
	require.Equal(t, ran+1, got.Cut.Statement, "the cut names the statement after the last shown")
	require.Equal(t, 1, got.Cut.Line)
	require.Equal(t, 1+13*ran, got.Cut.Column)
	require.Contains(t, got.Cut.Message, fmt.Sprintf("statement %d", got.Cut.Statement))
	require.Contains(t, got.Cut.Message, fmt.Sprint(console.MaxReplyBytes))
	last := got.Outcomes[ran]
	require.NotNil(t, last.Error)
	require.Equal(t, "submission_cut", last.Error.Code)
	require.Equal(t, got.Cut.Message, last.Error.Message)
	require.Equal(t, "created domain 'd199'", made.Outcomes[domains-1].Message)
	require.Equal(t, ran+1, streamed.outcomes, "the stream carried the answer's outcomes, the cut last")
}

// TestSubmissionStatementCap: a submission runs at most
// MaxSubmissionStatements statements; the first one past it does not run,
// and the answer names it.
func TestSubmissionStatementCap(t *testing.T) {
	e := newEnv(t, server.Config{})
	box := e.replBox()
	for _, tc := range []struct {
		name string
		n    int
	}{
		{"just inside", console.MaxSubmissionStatements - 1},
		{"at the cap", console.MaxSubmissionStatements},
		{"just outside", console.MaxSubmissionStatements + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got cutReply
			require.NoError(t, json.Unmarshal(e.execRaw(box.c, box.csrf, box.key, strings.Repeat("SHOW TRANSACTIONS;\n", tc.n)), &got))
			if tc.n <= console.MaxSubmissionStatements {
				require.Nil(t, got.Cut)
				require.Len(t, got.Outcomes, tc.n)
				for _, o := range got.Outcomes {
					require.Nil(t, o.Error)
				}
				return
			}
			require.NotNil(t, got.Cut)
			require.Len(t, got.Outcomes, console.MaxSubmissionStatements+1)
			require.Equal(t, "statements", got.Cut.Limit)
			require.False(t, got.Cut.Ran)
			require.Equal(t, console.MaxSubmissionStatements+1, got.Cut.Statement)
			require.Equal(t, console.MaxSubmissionStatements+1, got.Cut.Line)
			require.Equal(t, 1, got.Cut.Column)
			require.Contains(t, got.Cut.Message, fmt.Sprintf("at most %d statements", console.MaxSubmissionStatements))
			require.Equal(t, "submission_cut", got.Outcomes[console.MaxSubmissionStatements].Error.Code)
		})
	}
}

// TestREADMELimitsMatchConsoleBounds keeps README's limits row of the
// console's submission bounds true.
func TestREADMELimitsMatchConsoleBounds(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	size := func(n int) string {
		if n%(1<<20) == 0 {
			return fmt.Sprintf("%d MiB", n>>20)
		}
		return fmt.Sprintf("%d KiB", n>>10)
	}
	want := fmt.Sprintf("| — | %s / %d / %s |", size(console.MaxStatementBytes), console.MaxSubmissionStatements, size(console.MaxReplyBytes))
	row := regexp.MustCompile(`(?m)^\| one console statement-box submission: [^|]+(\| [^|]+ \| [^|]+ \|)`)
	m := row.FindStringSubmatch(string(b))
	require.NotNil(t, m, "README's limits table has the console submission's row")
	require.Equal(t, want, m[1])
}
