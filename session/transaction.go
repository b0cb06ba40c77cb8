package session

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// Defaults of the transaction limits in Options.
const (
	// DefaultMaxTransactionSteps is the most steps one transaction queues
	// when Options.MaxTransactionSteps is zero. Each queued step is
	// preflighted with the steps before it, so the bound also bounds that
	// work: at most this many transitions per step.
	DefaultMaxTransactionSteps = 1024
	// DefaultMaxTransactionBytes is the most bytes of canonical statement
	// text one transaction queues when Options.MaxTransactionBytes is zero.
	// A step's canonical text is under a hundred bytes, so with the default
	// step limit this bites only when most steps are long START AT ones.
	DefaultMaxTransactionBytes = 64 << 10
	// DefaultTransactionIdleTimeout is how long an open transaction may go
	// without a statement on its session before it is reverted, when
	// Options.TransactionIdleTimeout is zero.
	DefaultTransactionIdleTimeout = 10 * time.Minute
)

// transaction is an open BEGIN: the domain it is bound to and the queued
// lifecycle steps (Start, Stop and AlterPlacement plans), with the bytes of
// their canonical text and the monotonic reading of the BEGIN.
type transaction struct {
	domain string
	steps  []planner.Plan
	bytes  int
	began  time.Duration
}

// admitLocked returns a *TransactionLimitError when tx cannot queue p
// without passing the session's step or byte limit. s.mu is held.
func (s *Session) admitLocked(tx *transaction, p planner.Plan) error {
	text := p.String()
	if len(tx.steps) >= int(s.maxSteps) || tx.bytes+len(text) > int(s.maxBytes) {
		return &TransactionLimitError{Domain: tx.domain, Step: text, StepBytes: len(text),
			Steps: len(tx.steps), Bytes: tx.bytes, MaxSteps: int(s.maxSteps), MaxBytes: int(s.maxBytes)}
	}
	return nil
}

// touch records that a request starts now, and first reverts the open
// transaction when the session was idle past the transaction idle timeout
// since the last request: it returns the *TransactionExpiredError the
// request that found it reports instead of running. The check happens as
// each request starts and needs no timer: an idle transaction holds at most
// the session's limits until the next request reverts it.
func (s *Session) touch() error {
	now := s.src.Monotonic()
	s.mu.Lock()
	defer s.mu.Unlock()
	last := s.lastRequest
	s.lastRequest = now
	if s.tx == nil || s.idleTimeout <= 0 || now-last <= s.idleTimeout {
		return nil
	}
	tx := s.tx
	s.tx = nil
	return &TransactionExpiredError{Domain: tx.domain, Steps: len(tx.steps), Timeout: s.idleTimeout}
}

// ranUntil records that a request ended now, so the idle time the next
// request measures starts here.
func (s *Session) ranUntil() {
	now := s.src.Monotonic()
	s.mu.Lock()
	s.lastRequest = now
	s.mu.Unlock()
}

// Columns of SHOW TRANSACTIONS.
var transactionColumns = []wire.Column{
	{Name: "domain", Type: wire.KindText},
	{Name: "steps", Type: wire.KindUint},
	{Name: "bytes", Type: wire.KindUint},
	{Name: "age", Type: wire.KindDuration},
}

// Columns of SHOW ALL TRANSACTIONS.
var allTransactionColumns = []wire.Column{
	{Name: "session", Type: wire.KindUint},
	{Name: "identity", Type: wire.KindText},
	{Name: "state", Type: wire.KindText},
	{Name: "domain", Type: wire.KindText},
	{Name: "steps", Type: wire.KindUint},
	{Name: "bytes", Type: wire.KindUint},
	{Name: "age", Type: wire.KindDuration},
}

// showAllTransactions is SHOW ALL TRANSACTIONS: a row for the open
// transaction of every session in the session's directory (state "open",
// with the session's number and the identity it serves; this session's
// own among them) and for every transaction held for a client that lost
// its session ("held", no session number), ordered by session number, held
// ones last, oldest first. Transactions live on the node that serves their
// session until COMMIT, so the list is this node's: another member's
// sessions are listed by that member. Without a directory it lists this
// session's alone.
func (s *Session) showAllTransactions() wire.Result {
	if s.listed == nil {
		r := s.showTransactions()
		return wire.Result{Message: r.Message + " (this session's: the node keeps no list of its sessions)", Set: &wire.ResultSet{
			Columns: allTransactionColumns, Rows: s.allRows(r.Set.Rows)}}
	}
	sessions, held := s.listed.dir.list()
	now := s.src.Monotonic()
	type row struct {
		number uint64
		began  time.Duration
		values []wire.Value
	}
	var open, kept []row
	for _, o := range sessions {
		o.mu.Lock()
		if tx := o.tx; tx != nil && !o.closed {
			age := max(now-tx.began, 0).Truncate(time.Millisecond)
			open = append(open, row{number: o.listed.number, values: []wire.Value{wire.Uint(o.listed.number), identityValue(o.listed.identity),
				wire.Text("open"), wire.Text(tx.domain), wire.Uint(uint64(len(tx.steps))), wire.Uint(uint64(tx.bytes)), wire.Duration(uint64(age))}})
		}
		o.mu.Unlock()
	}
	if held != nil {
		for _, h := range held() {
			tx := h.Transaction.tx
			age := max(now-tx.began, 0).Truncate(time.Millisecond)
			kept = append(kept, row{began: tx.began, values: []wire.Value{wire.Null(), identityValue(h.Identity),
				wire.Text("held"), wire.Text(tx.domain), wire.Uint(uint64(len(tx.steps))), wire.Uint(uint64(tx.bytes)), wire.Duration(uint64(age))}})
		}
	}
	slices.SortFunc(open, func(a, b row) int { return cmp.Compare(a.number, b.number) })
	slices.SortStableFunc(kept, func(a, b row) int { return cmp.Compare(a.began, b.began) })
	set := &wire.ResultSet{Columns: allTransactionColumns, Rows: make([][]wire.Value, 0, len(open)+len(kept))}
	for _, r := range append(open, kept...) {
		set.Rows = append(set.Rows, r.values)
	}
	msg := plural(len(set.Rows), "transaction") + " on this node"
	if len(kept) > 0 {
		msg += fmt.Sprintf(" (%d open, %d held for a reconnecting client)", len(open), len(kept))
	}
	return wire.Result{Message: msg, Set: set}
}

// allRows widens SHOW TRANSACTIONS rows to SHOW ALL TRANSACTIONS' columns
// for a session without a directory: no number, its identity, open.
func (s *Session) allRows(rows [][]wire.Value) [][]wire.Value {
	out := make([][]wire.Value, 0, len(rows))
	for _, r := range rows {
		out = append(out, append([]wire.Value{wire.Null(), wire.Null(), wire.Text("open")}, r...))
	}
	return out
}

// identityValue is an identity as SHOW ALL TRANSACTIONS shows it: NULL
// when the session serves none it knows.
func identityValue(identity string) wire.Value {
	if identity == "" {
		return wire.Null()
	}
	return wire.Text(identity)
}

// showTransactions is SHOW TRANSACTIONS: one row for the session's open
// transaction, none when there is none. Transactions live in their
// sessions until COMMIT, so a session lists its own; SHOW ALL TRANSACTIONS
// (showAllTransactions) widens the list to every session of the node. Age
// is the time since BEGIN on the session's time source, to the
// millisecond.
func (s *Session) showTransactions() wire.Result {
	now := s.src.Monotonic()
	s.mu.Lock()
	defer s.mu.Unlock()
	set := &wire.ResultSet{Columns: transactionColumns, Rows: [][]wire.Value{}}
	if tx := s.tx; tx != nil {
		age := max(now-tx.began, 0).Truncate(time.Millisecond)
		set.Rows = append(set.Rows, []wire.Value{wire.Text(tx.domain), wire.Uint(uint64(len(tx.steps))),
			wire.Uint(uint64(tx.bytes)), wire.Duration(uint64(age))})
	}
	r := wire.Result{Message: plural(len(set.Rows), "transaction"), Set: set}
	if s.tx != nil {
		r.Domain = s.tx.domain
	}
	return r
}

// Columns of DESCRIBE TRANSACTION.
var transactionStepColumns = []wire.Column{
	{Name: "step", Type: wire.KindUint},
	{Name: "statement", Type: wire.KindText},
	{Name: "bytes", Type: wire.KindUint},
}

// describeTransaction is DESCRIBE TRANSACTION: one row per queued step of
// the session's open transaction, in the order COMMIT applies them, with
// its canonical text and length; the message names the domain, the steps
// and bytes against the session's limits and the time since BEGIN. With no
// transaction open it is refused as COMMIT is.
func (s *Session) describeTransaction() (wire.Result, error) {
	now := s.src.Monotonic()
	s.mu.Lock()
	defer s.mu.Unlock()
	tx := s.tx
	if tx == nil {
		return wire.Result{}, &NoTransactionError{Statement: "DESCRIBE TRANSACTION"}
	}
	set := &wire.ResultSet{Columns: transactionStepColumns, Rows: make([][]wire.Value, 0, len(tx.steps))}
	for i, p := range tx.steps {
		text := p.String()
		set.Rows = append(set.Rows, []wire.Value{wire.Uint(uint64(i + 1)), wire.Text(text), wire.Uint(uint64(len(text)))})
	}
	age := max(now-tx.began, 0).Truncate(time.Millisecond)
	msg := fmt.Sprintf("transaction on domain '%s': %s of at most %d, %d of at most %d bytes, open for %s",
		tx.domain, plural(len(tx.steps), "step"), s.maxSteps, tx.bytes, s.maxBytes, wire.Duration(uint64(age)).String())
	if s.idleTimeout > 0 {
		msg += fmt.Sprintf("; reverted after %s without a statement", wire.Duration(uint64(s.idleTimeout)).String())
	}
	return wire.Result{Domain: tx.domain, Message: msg, Set: set}, nil
}

// TransactionLimitError is a step refused because queueing it would take
// the open transaction past the session's step limit
// (Options.MaxTransactionSteps) or byte limit (Options.MaxTransactionBytes).
// The transaction stays open with the steps before it.
type TransactionLimitError struct {
	// Domain is the domain the open transaction is bound to.
	Domain string
	// Step is the refused step's canonical text and StepBytes its length.
	Step      string
	StepBytes int
	// Steps and Bytes are what the transaction holds.
	Steps int
	Bytes int
	// MaxSteps and MaxBytes are the session's limits.
	MaxSteps int
	MaxBytes int
}

// Error returns the operator-facing message.
func (e *TransactionLimitError) Error() string {
	const todo = "; COMMIT or REVERT the transaction, then queue the rest in a new one"
	step := strings.TrimSuffix(e.Step, ";")
	if e.Steps >= e.MaxSteps {
		return fmt.Sprintf("transaction on domain '%s' already holds %d steps, the most one may queue; %s was not queued%s",
			e.Domain, e.Steps, step, todo)
	}
	return fmt.Sprintf("transaction on domain '%s' holds %d bytes of queued statements and %s (%d bytes) would pass the limit of %d; it was not queued%s",
		e.Domain, e.Bytes, step, e.StepBytes, e.MaxBytes, todo)
}

// Unwrap returns ErrTransactionFull.
func (e *TransactionLimitError) Unwrap() error { return ErrTransactionFull }

// TransactionExpiredError is a statement refused, without running, because
// the session's open transaction had been idle past the session's
// transaction idle timeout (Options.TransactionIdleTimeout) and was reverted
// as the statement arrived. The session has no transaction after it.
type TransactionExpiredError struct {
	// Domain is the domain the reverted transaction was bound to.
	Domain string
	// Steps is the number of steps discarded.
	Steps int
	// Timeout is the idle timeout that passed.
	Timeout time.Duration
}

// Error returns the operator-facing message.
func (e *TransactionExpiredError) Error() string {
	return fmt.Sprintf("the transaction on domain '%s' had no statement for longer than %s and was reverted (%s discarded); this statement did not run: BEGIN a new transaction and queue the steps again",
		e.Domain, grammar.FormatDuration(uint64(e.Timeout)), plural(e.Steps, "step"))
}

// Unwrap returns ErrTransactionExpired.
func (e *TransactionExpiredError) Unwrap() error { return ErrTransactionExpired }

// stepRequests returns the lifecycle requests of a transaction's queued
// plans, in order, as the node resolves them.
func stepRequests(plans []planner.Plan) []lifecycle.StepRequest {
	out := make([]lifecycle.StepRequest, len(plans))
	for i, p := range plans {
		out[i] = planner.Step(p)
	}
	return out
}
