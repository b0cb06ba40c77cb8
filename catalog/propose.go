package catalog

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/raft"

	"github.com/nspl-dev/nspl/lifecycle"
)

// NewRequestID returns a request id no other proposal of any node has:
// this node's name and incarnation (random, fresh on every Open) and a
// sequence number. A writer that may retry picks one before its first
// attempt and keeps it on every retry (see lifecycle.Command.RequestID).
func (n *Replica) NewRequestID() string {
	var buf [lifecycle.MaxRequestIDLen]byte
	return string(strconv.AppendUint(append(buf[:0], n.requestPrefix...), n.requestSeq.Add(1), 10))
}

// requestPrefix is the part of every request id of one incarnation before
// its sequence number: the node name, unless it is too long to leave room
// for the rest (the incarnation alone keeps the id unique), and the
// incarnation in hex, each followed by a dash.
func requestPrefix(name string, incarnation uint64) string {
	if len(name) > lifecycle.MaxRequestIDLen-48 {
		name = ""
	}
	return name + "-" + strconv.FormatUint(incarnation, 16) + "-"
}

// Propose commits cmd through raft and returns its lifecycle.Result once
// the local FSM has applied it (and Config.OnChange has run). A refused
// command is not an error here: its typed domain error is in
// Result.Failure. The error is nil or one of the catalog sentinels
// (ErrNotLeader, ErrLeadershipUnconfirmed, ErrTimeout and ErrShutdown mean
// nothing was proposed; ErrOutcomeUnknown and ErrLeadershipLost mean it
// may or may not commit), a lifecycle ErrInvalidCommand for a malformed
// command, or ctx's error before anything was proposed.
//
// ctx bounds both the hand-off to raft and the wait for the commit; a
// cancellation after the hand-off returns an error wrapping both
// ErrOutcomeUnknown and ctx's error.
//
// A command without a RequestID gets a fresh one (NewRequestID). Proposing
// a command again with the RequestID of an earlier proposal, after an
// ErrOutcomeUnknown or on another node, commits it at most once: the
// retry answers with the first result (see RequestWindow).
func (n *Replica) Propose(ctx context.Context, cmd lifecycle.Command) (lifecycle.Result, error) {
	if cmd.RequestID == "" {
		cmd.RequestID = n.NewRequestID()
	}
	data, err := lifecycle.EncodeCommand(cmd)
	if err != nil {
		return lifecycle.Result{}, err
	}
	return n.result(n.apply(ctx, data, true))
}

// result turns an FSM response into a lifecycle.Result.
func (n *Replica) result(resp any, err error) (lifecycle.Result, error) {
	if err != nil {
		return lifecycle.Result{}, err
	}
	switch v := resp.(type) {
	case *lifecycle.Result:
		return *v, nil
	case *HaltError:
		return lifecycle.Result{}, v
	default:
		return lifecycle.Result{}, fmt.Errorf("%w: apply answered with %T", ErrOutcomeUnknown, resp)
	}
}

// apply hands data to raft and waits for the FSM's response. With
// confirmed set it refuses unless this term's leadership is confirmed.
func (n *Replica) apply(ctx context.Context, data []byte, confirmed bool) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n.isClosed() {
		return nil, ErrShutdown // not "not the leader": no election will help
	}
	if h := n.fsm.halted(); h != nil {
		return nil, h
	}
	if n.raft.State() != raft.Leader {
		return nil, n.translate(raft.ErrNotLeader, false)
	}
	if confirmed && n.confirmedTerm.Load() != n.raft.CurrentTerm() {
		return nil, ErrLeadershipUnconfirmed
	}
	timeout, err := raftTimeout(ctx)
	if err != nil {
		return nil, err
	}
	f, err := n.await(ctx, func() raft.Future { return n.raft.Apply(data, timeout) })
	if err != nil {
		return nil, err
	}
	return f.(raft.ApplyFuture).Response(), nil
}

// raftTimeout is the timeout raft's calls without a context take for ctx:
// the time left until its deadline, or none. A context deadline is a
// wall-clock instant by definition.
func raftTimeout(ctx context.Context) (time.Duration, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0, nil
	}
	timeout := time.Until(dl)
	if timeout <= 0 {
		return 0, ErrTimeout
	}
	return timeout, nil
}

// await starts a raft future and waits for its answer or ctx, whichever
// comes first; an answer's error is translated, and ctx ending first is
// ErrOutcomeUnknown (raft may still apply it).
//
// Every future's wait is counted in n.futures, and Close drains them
// before it shuts raft down: raft never answers a future still queued when
// it shuts down, so this is what guarantees that each of them is answered
// and no waiter is left behind. A ctx that can end needs a goroutine to
// wait on the future beside it; one that cannot (context.Background) is
// waited for on the caller's goroutine.
func (n *Replica) await(ctx context.Context, start func() raft.Future) (raft.Future, error) {
	if !n.futures.enter() {
		return nil, ErrShutdown
	}
	f := start()
	if ctx.Done() == nil {
		err := f.Error()
		n.futures.exit()
		if err != nil {
			return nil, n.translate(err, true)
		}
		return f, nil
	}
	done := make(chan error, 1)
	go func() {
		defer n.futures.exit()
		done <- f.Error()
	}()
	select {
	case err := <-done:
		if err != nil {
			return nil, n.translate(err, true)
		}
		return f, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ctx.Err())
	}
}

// announceCommits makes the followers learn at once that the entries the
// FSM begins to apply committed. Raft tells a follower the commit index
// only in its next AppendEntries, which without a new entry waits for the
// replication heartbeat (CommitTimeout, randomised up to twice it); a
// statement's completion boundary waits for every live node to install, so
// it would wait for that timer on every write. A barrier is a new entry:
// appending it replicates at once and carries the commit index. The FSM
// signals committed as a batch holding a command begins to apply, before
// the leader applies and installs it, so the followers apply alongside the
// leader; one signal stands for every batch since the last barrier. Nobody
// waits for a barrier's future, which raft answers or drops on shutdown; a
// follower applies the same batches and appends nothing. It runs until ctx
// ends.
func (n *Replica) announceCommits(ctx context.Context, committed <-chan struct{}) {
	defer n.loop.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-committed:
		}
		if n.raft.State() == raft.Leader {
			n.raft.Barrier(0)
		}
	}
}

// Remembered returns the first result of the proposal committed under
// request id, while the request window (replicated state, as this replica
// has applied it) still holds it: a writer that sends a write again under
// its id learns that the first attempt committed, and how, even when the
// write would now be refused before it is proposed.
func (n *Replica) Remembered(id string) (lifecycle.Result, bool) {
	if id == "" {
		return lifecycle.Result{}, false
	}
	n.fsm.mu.Lock()
	defer n.fsm.mu.Unlock()
	return n.fsm.requests.lookup(id)
}
