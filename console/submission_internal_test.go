package console

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/session"
	"github.com/stretchr/testify/require"
)

// TestBudget: a submission's bounds, at, just inside and just outside
// each: the statement cap admits its last statement and not one more, and
// the byte cap admits outcomes that fill it exactly and not a byte more.
func TestBudget(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ran      int
		mayRun   bool
		used, n  int
		mayShow  bool
		usedThen int
	}{
		{"inside both", 254, true, 99, 0, true, 99},
		{"at the statement cap", 255, true, 100, 0, true, 100},
		{"past the statement cap", 256, false, 0, 0, true, 0},
		{"an outcome just inside the bytes", 0, true, 50, 49, true, 99},
		{"an outcome that fills the bytes", 0, true, 50, 50, true, 100},
		{"an outcome one byte past", 0, true, 50, 51, false, 50},
		{"an outcome larger than the whole cap", 0, true, 0, 101, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &budget{bounds: bounds{statements: 256, bytes: 100}, ran: tc.ran, used: tc.used}
			require.Equal(t, tc.mayRun, b.mayRun())
			require.Equal(t, tc.mayShow, b.mayShow(tc.n))
			require.Equal(t, tc.usedThen, b.used)
		})
	}
	require.Equal(t, bounds{MaxSubmissionStatements, MaxReplyBytes}, submissionBounds, "production runs with the documented bounds")
}

// TestSourceAndCaretWindow: a long line is shown as a window around the
// column, the caret under the same character.
func TestSourceAndCaretWindow(t *testing.T) {
	long := strings.Repeat("LIST DOMAINS;", 5041)
	for _, tc := range []struct {
		name         string
		text         string
		column       int
		wantSrc      string // "" checks only the window's bound
		prefix, tail bool
	}{
		{"a short line whole", "USE x;", 5, "USE x;", false, false},
		{"past a short line's end", "USE x", 99, "USE x", false, false},
		{"a long line's start", long, 1, "", false, true},
		{"a long line's middle", long, 1 + 13*2000, "", true, true},
		{"a long line's end", long, len(long) + 1, "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, caret := sourceAndCaret(tc.text, 1, tc.column)
			if tc.wantSrc != "" {
				require.Equal(t, tc.wantSrc, src)
			}
			require.LessOrEqual(t, utf8.RuneCountInString(src), maxSourceRunes+2)
			require.Equal(t, tc.prefix, strings.HasPrefix(src, "…"))
			require.Equal(t, tc.tail, strings.HasSuffix(src, "…"))
			at := utf8.RuneCountInString(caret) - 1
			if tc.column-1 < len(tc.text) {
				require.Equal(t, tc.text[tc.column-1:tc.column], string([]rune(src)[at]), "the caret is under the column's character")
			}
		})
	}
}

// FuzzSourceAndCaret: any text, line and column are shown without a
// panic, within the window's bound, with the caret under the column's
// character when the column is on the line.
func FuzzSourceAndCaret(f *testing.F) {
	f.Add("LIST DOMAINS;\nSTAR;", 2, 1)
	f.Add(strings.Repeat("LIST DOMAINS;", 50), 1, 300)
	f.Add("\tUSE é;", 1, 6)
	f.Add("x", 1, 1<<40)
	f.Fuzz(func(t *testing.T, text string, line, column int) {
		src, caret := sourceAndCaret(text, line, column)
		if caret == "" {
			return
		}
		require.True(t, strings.HasSuffix(caret, "^"))
		require.NotContains(t, src, "\n")
		require.LessOrEqual(t, utf8.RuneCountInString(src), maxSourceRunes+2)
		lines := strings.Split(text, "\n")
		orig := []rune(strings.TrimRight(lines[line-1], "\r"))
		at := utf8.RuneCountInString(caret) - 1
		if column >= 1 && column <= len(orig) && utf8.ValidString(text) {
			require.Equal(t, orig[column-1], []rune(src)[at])
		}
	})
}

// flushRecorder is an answer's ResponseWriter that keeps what was flushed.
type flushRecorder struct {
	header           http.Header
	written, flushed []byte
}

func (f *flushRecorder) Header() http.Header { return f.header }
func (f *flushRecorder) WriteHeader(int)     {}
func (f *flushRecorder) Write(b []byte) (int, error) {
	f.written = append(f.written, b...)
	return len(b), nil
}
func (f *flushRecorder) Flush() { f.flushed = append([]byte(nil), f.written...) }

// probeWriter is a statement box stream that notes, at each outcome it is
// sent, how many outcomes the answer had flushed by then.
type probeWriter struct {
	answer *flushRecorder
	seen   []int
}

func (p *probeWriter) Write(b []byte) (int, error) {
	if bytes.HasPrefix(b, []byte("event: outcome\n")) {
		p.seen = append(p.seen, bytes.Count(p.answer.flushed, []byte(`{"statement"`)))
	}
	return len(b), nil
}
func (p *probeWriter) Flush()              {}
func (p *probeWriter) Header() http.Header { return http.Header{} }
func (p *probeWriter) WriteHeader(int)     {}

// TestAnswerStreamsOutcomes: each outcome is written to the answer, and
// flushed, as soon as its statement has run, before the next statement
// runs; nothing waits for the whole submission.
func TestAnswerStreamsOutcomes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := node.Open(ctx, node.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RaftLogLevel: slog.LevelError})
	require.NoError(t, err)
	defer n.Close()
	ans := &flushRecorder{header: http.Header{}}
	probe := &probeWriter{answer: ans}
	sess := session.New(n, session.Options{})
	defer sess.Close()
	streamCtx, endStream := context.WithCancel(ctx)
	rp := &repl{ctx: streamCtx, sess: sess, es: &eventStream{w: probe, rc: http.NewResponseController(probe)}}
	forwarded := make(chan struct{})
	go func() { // the statement box stream's loop, as serveRepl runs it
		defer close(forwarded)
		rp.forward()
	}()
	c := &Console{}
	c.run(ctx, rp, "CREATE DOMAIN a; LIST DOMAINS; SHOW TRANSACTIONS; LIST DOMAINS;", submissionBounds, newAnswer(ans))
	endStream()
	<-forwarded
	require.Equal(t, []int{0, 1, 2, 3}, probe.seen, "at the stream's k-th outcome the answer had flushed k-1")
	var got struct {
		Outcomes []outcome `json:"outcomes"`
		Cut      *cut      `json:"cut"`
		State    struct {
			Active string `json:"active"`
		} `json:"state"`
	}
	require.NoError(t, json.Unmarshal(ans.flushed, &got), "%s", ans.flushed)
	require.Len(t, got.Outcomes, 4)
	require.Equal(t, "created domain 'a'", got.Outcomes[0].Message)
	require.Nil(t, got.Cut)
}
