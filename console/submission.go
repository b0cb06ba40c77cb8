package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// Bounds of one statement box submission. Its text is at most
// MaxStatementBytes; what it runs and what it answers are bounded too, so
// that one small POST cannot make the node run and write without end
// (5,041 LIST DOMAINS; fit in 64 KiB).
const (
	// MaxSubmissionStatements bounds the statements one submission runs:
	// the first statement past it does not run, and the answer says so.
	MaxSubmissionStatements = 256
	// MaxReplyBytes bounds the bytes of the outcomes one submission
	// answers with (the same outcomes go on the statement box's stream):
	// the statement whose outcome would take them past it has run, but its
	// outcome is not shown and no statement after it runs.
	MaxReplyBytes = 1 << 20
)

// ErrSubmissionCut: a submission stopped at one of its bounds before its
// last statement. Its outcome's code is submission_cut.
var ErrSubmissionCut = wire.NewSentinel("submission_cut", "the submission was cut at a bound")

// The limits a cut names.
const (
	cutStatements = "statements"
	cutReplyBytes = "reply_bytes"
)

// execRequest is a statement box submission.
type execRequest struct {
	Key  string `json:"key"`
	Text string `json:"text"`
}

// sessionState is the statement box's session after a submission, for its
// prompt.
type sessionState struct {
	// Prompt is the shell's prompt for this state (promptFor).
	Prompt    string `json:"prompt"`
	Active    string `json:"active"`
	InTx      bool   `json:"in_transaction"`
	TxDomain  string `json:"transaction_domain,omitempty"`
	TxPending int    `json:"transaction_pending,omitempty"`
}

// cut says where and why a submission stopped at a bound.
type cut struct {
	// Statement is the 1-based number of the statement that stopped it,
	// at Line and Column of the submission.
	Statement int `json:"statement"`
	Line      int `json:"line"`
	Column    int `json:"column"`
	// Limit is cutStatements or cutReplyBytes.
	Limit string `json:"limit"`
	// Ran reports whether that statement ran (a reply_bytes cut: it ran,
	// its outcome is not shown); the statements after it did not.
	Ran     bool   `json:"ran"`
	Message string `json:"message"`
}

// bounds are a submission's caps: MaxSubmissionStatements and
// MaxReplyBytes in production.
type bounds struct{ statements, bytes int }

var submissionBounds = bounds{MaxSubmissionStatements, MaxReplyBytes}

// budget tracks one submission against its bounds.
type budget struct {
	bounds
	ran, used int
}

// mayRun reports whether one more statement may run.
func (b *budget) mayRun() bool { return b.ran < b.statements }

// mayShow reports whether an outcome of n bytes fits in what is left, and
// counts it when it does.
func (b *budget) mayShow(n int) bool {
	if n > b.bytes-b.used {
		return false
	}
	b.used += n
	return true
}

// serveExec runs a submission's statements, in order, in the statement
// box's session the key names, which must be the caller's own. Each
// outcome is sent on that session's stream (an attach reply before its
// frames) and written to the answer as it is produced:
//
//	{"outcomes":[…],"cut":{…},"state":{…}}
//
// with "cut" only when a bound stopped the submission.
func (c *Console) serveExec(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxStatementBytes+1024)
	var req execRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("a submission is at most %d bytes of statements", MaxStatementBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "the body must be one JSON object {\"key\":…,\"text\":…}: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(req.Text) > MaxStatementBytes {
		http.Error(w, fmt.Sprintf("a submission is at most %d bytes of statements", MaxStatementBytes), http.StatusRequestEntityTooLarge)
		return
	}
	p := caller(r)
	c.mu.Lock()
	rp := c.repls[req.Key]
	c.mu.Unlock()
	if rp == nil || rp.login != p.login {
		http.Error(w, "this statement session has ended; the page opens a new one", http.StatusConflict)
		return
	}
	rp.runMu.Lock()
	defer rp.runMu.Unlock()
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	defer context.AfterFunc(rp.ctx, stop)()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	c.run(ctx, rp, req.Text, submissionBounds, newAnswer(w))
}

// answer writes an exec's JSON answer as its parts are produced, flushing
// each outcome. A failed write is kept and ends the writing, not the run:
// the statements' outcomes still go on the session's stream.
type answer struct {
	w   io.Writer
	rc  *http.ResponseController
	n   int // outcomes written
	err error
}

func newAnswer(w http.ResponseWriter) *answer {
	a := &answer{w: w, rc: http.NewResponseController(w)}
	a.write([]byte(`{"outcomes":[`))
	return a
}

func (a *answer) write(b []byte) {
	if a.err != nil {
		return
	}
	if _, a.err = a.w.Write(b); a.err == nil {
		a.err = a.rc.Flush()
	}
}

// outcome writes one outcome's JSON.
func (a *answer) outcome(b []byte) {
	if a.n > 0 {
		a.write([]byte{','})
	}
	a.n++
	a.write(b)
}

// end writes the cut (when there is one) and the state, and closes the
// object.
func (a *answer) end(ct *cut, st sessionState) {
	tail := struct {
		Cut   *cut         `json:"cut,omitempty"`
		State sessionState `json:"state"`
	}{ct, st}
	b, _ := json.Marshal(tail) // plain structs: Marshal cannot fail
	a.write([]byte{']', ','})
	a.write(b[1:]) // the tail's fields, after the outcomes
}

// submission is one submission as the statement box's stream sees it: the
// stream's loop answers each of its statements (answerReply) and hands the
// outcome back on replies, one at a time, as run waits for each.
type submission struct {
	text    string
	plans   []planner.Plan
	budget  *budget
	replies chan answered // buffered 1: the loop never waits for run
}

// answered is one statement's outcome as the stream's loop handled it:
// its JSON, whether it fitted the budget and went on the stream (shown),
// whether it failed, and the session's state after it.
type answered struct {
	enc    []byte
	shown  bool
	failed bool
	state  wire.SessionState
}

// answerReply handles the reply of one of sub's statements on the
// statement box's stream, in its place there: its outcome is sent when it
// fits what is left of the submission's bytes, and handed back to the
// submission either way.
func (rp *repl) answerReply(sub *submission, ev session.Event) error {
	var o outcome
	if ev.Err != nil {
		o = outcome{Statement: sub.plans[ev.ID-1].String(), Error: newFailure(sub.text, ev.Err)}
	} else {
		res := ev.Result
		o = outcome{Statement: res.Statement, Message: res.Message, Table: newTable(res.Set), Warnings: res.Warnings}
	}
	enc, _ := json.Marshal(o) // plain structs of strings: Marshal cannot fail
	a := answered{enc: enc, shown: sub.budget.mayShow(len(enc)), failed: ev.Err != nil, state: ev.State}
	var err error
	if a.shown {
		err = rp.es.sendRaw("outcome", enc)
	}
	sub.replies <- a
	return err
}

// submit submits pl, statement id of sub (from 1), and waits for the stream's loop to
// hand its outcome back. A session or stream that has ended answers it
// with ErrClosed here, on the answer alone, as its stream takes nothing.
func (rp *repl) submit(ctx context.Context, sub *submission, id uint64, pl planner.Plan) answered {
	if err := rp.sess.Submit(ctx, session.Request{ID: id, Plan: pl, Tag: sub}); err == nil {
		select {
		case a := <-sub.replies:
			return a
		case <-rp.ctx.Done():
		}
	}
	o := outcome{Statement: pl.String(), Error: newFailure(sub.text, session.ErrClosed)}
	enc, _ := json.Marshal(o)
	return answered{enc: enc, shown: sub.budget.mayShow(len(enc)), failed: true, state: rp.sess.State()}
}

// run plans text and submits its statements to rp's session within bd; the
// stream's loop sends each outcome on rp's stream in its place among the
// frames, and run writes it to ans as it is answered. It stops at the
// first failed statement, at the first statement past bd.statements (which
// does not run), or at the statement whose outcome would take the outcomes
// past bd.bytes (which has run; its outcome is replaced by the cut's).
func (c *Console) run(ctx context.Context, rp *repl, text string, bd bounds, ans *answer) {
	plans, planErr := planner.PlanScript(text)
	sub := &submission{text: text, plans: plans, budget: &budget{bounds: bd}, replies: make(chan answered, 1)}
	b := sub.budget
	var ct *cut
	st, ran := rp.sess.State(), false
	for i, pl := range plans {
		if !b.mayRun() {
			ct = newCut(i+1, pl, cutStatements, false, fmt.Sprintf(
				"statement %d (line %d, column %d) and those after it did not run: one console submission runs at most %d statements; submit the rest on their own, or run the script with nspl -f",
				i+1, pl.Pos().Line, pl.Pos().Column, bd.statements))
			break
		}
		b.ran++
		c.statements.Add(1)
		a := rp.submit(ctx, sub, uint64(i+1), pl)
		st, ran = a.state, true
		if !a.shown {
			ct = newCut(i+1, pl, cutReplyBytes, true, fmt.Sprintf(
				"statement %d (line %d, column %d) ran, but its outcome of %d bytes would take this submission's outcomes past %d bytes, so it is not shown and the statements after it did not run; run it on its own, or from the nspl shell",
				i+1, pl.Pos().Line, pl.Pos().Column, len(a.enc), bd.bytes))
			break
		}
		ans.outcome(a.enc)
		if a.failed {
			planErr = nil
			break
		}
	}
	if !ran {
		st = rp.sess.State()
	}
	if ct != nil {
		planErr = nil
		o := outcome{Statement: ct.statementText(plans), Error: &failure{Message: ct.Message, Code: wire.CodeOf(ErrSubmissionCut), Line: ct.Line, Column: ct.Column}}
		o.Error.Source, o.Error.Caret = sourceAndCaret(text, ct.Line, ct.Column)
		enc, _ := json.Marshal(o)
		_ = rp.es.sendRaw("outcome", enc)
		ans.outcome(enc)
	}
	if planErr != nil {
		o := outcome{Error: newFailure(text, planErr)}
		enc, _ := json.Marshal(o)
		_ = rp.es.sendRaw("outcome", enc)
		ans.outcome(enc)
	}
	state := sessionState{Prompt: promptFor(st.Active, st.InTx), Active: st.Active, InTx: st.InTx, TxDomain: st.TxDomain, TxPending: st.TxPending}
	_ = rp.es.send("state", state)
	ans.end(ct, state)
}

// promptFor is the statement box's prompt, the shell's: nspl> without an
// active domain, nspl[<domain>]> with one (the name as NSPL writes it), and
// a * before the > while a transaction is open.
func promptFor(active string, inTx bool) string {
	p := "nspl"
	if active != "" {
		p += "[" + grammar.FormatName(active) + "]"
	}
	if inTx {
		p += "*"
	}
	return p + ">"
}

// newCut is the cut at statement n, plan pl.
func newCut(n int, pl planner.Plan, limit string, ran bool, message string) *cut {
	return &cut{Statement: n, Line: pl.Pos().Line, Column: pl.Pos().Column, Limit: limit, Ran: ran, Message: message}
}

// statementText is the cut statement's canonical text.
func (ct *cut) statementText(plans []planner.Plan) string {
	if ct.Statement < 1 || ct.Statement > len(plans) {
		return ""
	}
	return plans[ct.Statement-1].String()
}

// Sentinels returns the package's coded sentinels, for the module's one
// code table.
func Sentinels() []error { return []error{ErrSubmissionCut} }
