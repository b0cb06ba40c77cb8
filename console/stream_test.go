package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nspl-dev/nspl/server"
	"github.com/stretchr/testify/require"
)

type frame struct {
	Domain     string `json:"domain"`
	Attachment uint64 `json:"attachment"`
	Kind       string `json:"kind"`
	Clock      *struct {
		State      string `json:"state"`
		Generation string `json:"generation"`
	} `json:"clock"`
	Tick   string `json:"tick"`
	Reason string `json:"reason"`
}

func decodeFrame(t *testing.T, data string) frame {
	t.Helper()
	var f frame
	require.NoError(t, json.Unmarshal([]byte(data), &f))
	return f
}

// TestClockStream: a clock stream attaches to its domain, reports its
// state and ticks as it changes, and ends with the attachment when the
// domain is dropped; a missing domain is refused.
func TestClockStream(t *testing.T) {
	e := newEnv(t, server.Config{})
	c := e.browser()
	csrf := e.csrf(c)
	repl := e.open(c, "/console/api/repl")
	key := repl.hello().Key

	missing := e.open(c, "/console/api/clock?domain=nowhere")
	missing.hello()
	require.Contains(t, missing.next("refused").data, "nowhere")
	missing.ended()

	e.exec(c, csrf, key, "CREATE PACED DOMAIN web WITH PERIOD 10ms SKEW 1ms;")
	cs := e.open(c, "/console/api/clock?domain=web")
	cs.hello()
	var attached struct {
		Attachment uint64 `json:"attachment"`
		Clock      struct {
			State string `json:"state"`
		} `json:"clock"`
	}
	require.NoError(t, json.Unmarshal([]byte(cs.next("attached").data), &attached))
	require.Equal(t, "stopped", attached.Clock.State)

	e.exec(c, csrf, key, "USE web; START AT NOW TIME RATE 3;")
	cs.until("frame", func(d string) bool { f := decodeFrame(t, d); return f.Kind == "state" && f.Clock.State == "paced" })
	cs.until("frame", func(d string) bool { f := decodeFrame(t, d); return f.Kind == "tick" && f.Tick != "" })
	e.exec(c, csrf, key, "STOP;")
	cs.until("frame", func(d string) bool { f := decodeFrame(t, d); return f.Kind == "state" && f.Clock.State == "stopped" })
	e.exec(c, csrf, key, "DROP DOMAIN web;")
	end := decodeFrame(t, cs.until("frame", func(d string) bool { return decodeFrame(t, d).Kind == "end" }).data)
	require.Equal(t, "DomainRemoved", end.Reason)
	require.Equal(t, attached.Attachment, end.Attachment)
	cs.ended()
}

// TestStatementBoxOrdersRepliesAndFrames: the statement box's stream
// carries each outcome, and an attach reply comes before any frame of its
// attachment; a failing statement stops the submission with its position
// and caret, and what ran before it stays.
func TestStatementBoxOrdersRepliesAndFrames(t *testing.T) {
	e := newEnv(t, server.Config{})
	c := e.browser()
	csrf := e.csrf(c)
	repl := e.open(c, "/console/api/repl")
	key := repl.hello().Key

	sub := e.exec(c, csrf, key, "CREATE PACED DOMAIN web WITH PERIOD 10ms SKEW 1ms; USE web; START AT NOW; ATTACH DOMAIN CLOCK;")
	require.Len(t, sub.Outcomes, 4)
	require.Equal(t, "web", sub.State.Active)
	for _, want := range []string{"created domain 'web'", "using domain 'web'", "started domain 'web'", "attached to the clock of domain 'web'"} {
		ev := repl.next("outcome", "frame")
		require.Equal(t, "outcome", ev.name, "no frame before the attach reply")
		require.Contains(t, ev.data, want)
	}
	repl.until("frame", func(d string) bool { return decodeFrame(t, d).Kind == "tick" })

	sub = e.exec(c, csrf, key, "DETACH DOMAIN CLOCK;\nLIST DOMAINS;\n  STAR;\nLIST DOMAINS;")
	require.Len(t, sub.Outcomes, 3)
	require.NotNil(t, sub.Outcomes[1].Table)
	require.Equal(t, []string{"name", "pace", "status", "generation"}, sub.Outcomes[1].Table.Columns)
	fail := sub.Outcomes[2].Error
	require.NotNil(t, fail)
	require.Equal(t, 3, fail.Line)
	require.Equal(t, 3, fail.Column)
	require.Equal(t, "  STAR;", fail.Source)
	require.Equal(t, "  ^", fail.Caret)
	require.Equal(t, "syntax", fail.Code)

	// After the detach reply no frame of that attachment follows, up to the
	// submission's state.
	repl.until("outcome", func(d string) bool { return strings.Contains(d, "detached") })
	for {
		ev := repl.next("frame", "state")
		require.NotEqual(t, "frame", ev.name, "a frame after the detach reply: %s", ev.data)
		if ev.name == "state" {
			return
		}
	}
}
