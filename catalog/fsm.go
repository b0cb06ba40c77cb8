package catalog

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/nspl-dev/nspl/lifecycle"
)

// FSM is the raft state machine of the catalog: it holds a lifecycle.State
// and applies committed lifecycle commands to it.
//
// Apply is deterministic: a committed entry carries every resolved value
// (the sampled UTC anchor, the chosen authority), so every replica applying
// the same log reaches the same state. Domain errors are not apply failures:
// they come back as the entry's lifecycle.Result.
//
// An entry that does not decode is a bug (or corruption) in the replicated
// log. The FSM cannot skip it (replicas would diverge) and raft gives Apply
// no way to fail, so the FSM halts: it logs the entry at error level, stops
// applying that entry and every later one (each answers with a *HaltError),
// refuses to take snapshots (a snapshot would claim the skipped entries and
// let raft truncate the log past them) and signals Halted, after which the
// node refuses every write with ErrHalted. The process keeps running, which
// matters to an embedding host; the data directory keeps the bad entry for
// inspection. (Panicking, the other choice raft's contract allows, would
// take the host process down with it.)
//
// A command that carries a request id is applied at most once while the
// id is in the FSM's window of recent requests (RequestWindow, evicted in
// apply order, part of every snapshot): a later entry with the same id,
// a retry after a leader change, does not apply again and answers with the
// first entry's result.
//
// Reads are lock-free: after every batch that changed the state the FSM
// publishes an immutable clone through an atomic pointer (State). Restore
// replaces the whole state with the snapshot's, never merging.
//
// Raft calls Apply, ApplyBatch, Snapshot and Restore from one goroutine;
// the FSM still serialises them with a mutex so tests and tools may call
// them directly.
type FSM struct {
	logger *slog.Logger

	mu       sync.Mutex
	state    *lifecycle.State         // working state, guarded by mu
	requests *requestWindow           // recent request ids and results, guarded by mu
	decoder  lifecycle.CommandDecoder // reuses payloads across entries, guarded by mu

	published atomic.Pointer[lifecycle.State]
	// configEpoch advances whenever raft's committed configuration may
	// have changed (a configuration entry, a restore), so the node knows
	// when to read the voters again.
	configEpoch atomic.Uint64
	halt        atomic.Pointer[HaltError]
	haltedCh    chan struct{}

	changes *changeFeed

	// committed, when set before raft starts, is offered a signal (never
	// blocking) as each batch holding a command begins to apply: the
	// leader's cue that the batch committed (see Replica.announceCommits).
	committed chan<- struct{}
}

// HaltError is the response to a committed entry the FSM could not apply
// and to every entry after it.
type HaltError struct {
	// Index is the raft log index of the entry that could not be applied.
	Index uint64
	// Err says why.
	Err error
}

// Error describes the undecodable entry.
func (e *HaltError) Error() string {
	return fmt.Sprintf("catalog halted at committed entry %d: %v; inspect the data directory", e.Index, e.Err)
}

// Unwrap returns ErrHalted.
func (e *HaltError) Unwrap() error { return ErrHalted }

// NewFSM returns an FSM holding an empty catalog. onChange, when not nil,
// is called synchronously in commit order after every change (see Change).
func NewFSM(logger *slog.Logger, onChange func(Change)) *FSM {
	if logger == nil {
		logger = slog.Default()
	}
	f := &FSM{logger: logger, state: lifecycle.NewState(), requests: newRequestWindow(RequestWindow), haltedCh: make(chan struct{})}
	initial := f.state.Clone()
	f.published.Store(initial)
	f.changes = newChangeFeed(onChange, Change{Revision: initial.Revision(), State: initial})
	return f
}

// State returns the latest published state. The returned value is shared
// and must be treated as read-only: never call Apply on it (Clone it first).
// It is safe to call from any goroutine and takes no lock.
func (f *FSM) State() *lifecycle.State { return f.published.Load() }

// Revision returns the catalog revision of the latest published state.
func (f *FSM) Revision() uint64 { return f.published.Load().Revision() }

// Halted returns a channel that is closed when the FSM halts.
func (f *FSM) Halted() <-chan struct{} { return f.haltedCh }

// halted returns the halt error, or nil while the FSM is healthy.
func (f *FSM) halted() *HaltError { return f.halt.Load() }

// Apply applies one committed entry. It implements raft.FSM.
func (f *FSM) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies committed entries in order and returns one response
// per entry: a *lifecycle.Result for a command entry (never written once
// returned), nil for raft's own entries, a *HaltError once the FSM has
// halted. Subscribers see one Change for the batch, after the last entry.
// It implements raft.BatchingFSM.
func (f *FSM) ApplyBatch(logs []*raft.Log) []any {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, results, changed := batchResponses(len(logs))
	before := f.state.Revision()
	if f.committed != nil && slices.ContainsFunc(logs, func(l *raft.Log) bool { return l.Type == raft.LogCommand }) {
		select {
		case f.committed <- struct{}{}:
		default: // an announcement is pending already: it covers this batch
		}
	}
	for i, l := range logs {
		if h := f.halt.Load(); h != nil {
			out[i] = h
			continue
		}
		if l.Type == raft.LogConfiguration {
			f.configEpoch.Add(1)
		}
		if l.Type != raft.LogCommand {
			continue
		}
		cmd, err := f.decoder.Decode(l.Data)
		if err != nil {
			out[i] = f.haltLocked(l.Index, err)
			continue
		}
		var applied bool
		results[i], applied = f.applyLocked(cmd)
		out[i] = &results[i]
		if applied && results[i].Changed {
			changed = cmd.DomainsChanged(changed)
		}
	}
	if f.state.Revision() != before {
		f.publishLocked(Change{Domains: changed})
	}
	return out
}

// batchResponses returns the response slice of a batch of n entries, the
// results its command entries point to and an empty list for the names of
// the domains it changes (Change.Domains): a result goes out as a pointer,
// which an interface holds without allocating, so a batch costs these
// allocations however many commands it holds (and the list's growth), and
// a batch of one entry, the usual batch of a lone writer, costs one, its
// list holding the one domain such an entry usually changes.
func batchResponses(n int) ([]any, []lifecycle.Result, []string) {
	if n == 1 {
		one := &struct {
			out     [1]any
			result  [1]lifecycle.Result
			changed [1]string
		}{}
		return one.out[:], one.result[:], one.changed[:0]
	}
	return make([]any, n), make([]lifecycle.Result, n), nil
}

// applyLocked applies one decoded command, or answers a request id in the
// window with its first result; applied is false in that case, where the
// state is left as it was.
func (f *FSM) applyLocked(cmd lifecycle.Command) (res lifecycle.Result, applied bool) {
	if cmd.RequestID == "" {
		return f.state.Apply(cmd), true
	}
	if first, ok := f.requests.lookup(cmd.RequestID); ok {
		return first, false
	}
	res = f.state.Apply(cmd)
	f.requests.remember(cmd.RequestID, res)
	return res, true
}

// haltLocked records the first undecodable entry and signals Halted.
func (f *FSM) haltLocked(index uint64, err error) *HaltError {
	h := &HaltError{Index: index, Err: err}
	if f.halt.CompareAndSwap(nil, h) {
		f.logger.Error("catalog: committed entry cannot be applied; halting",
			"index", index, "err", err)
		close(f.haltedCh)
	}
	return f.halt.Load()
}

// publishLocked publishes a clone of the working state and notifies
// subscribers of c, the change that led to it, with its revision and state.
func (f *FSM) publishLocked(c Change) {
	s := f.state.Clone()
	f.published.Store(s)
	c.Revision, c.State = s.Revision(), s
	f.changes.publish(c)
}

// Snapshot returns a snapshot of the published state and the request
// window. It implements raft.FSM; it is cheap because the published state
// is already an immutable clone (and equals the working state between
// batches: an entry that changes nothing leaves it as it was) and the window
// is a copy of at most RequestWindow small entries. A halted FSM refuses to
// snapshot.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.halt.Load(); h != nil {
		return nil, h
	}
	return &fsmSnapshot{state: f.published.Load(), requests: f.requests.entries()}, nil
}

// Restore replaces the whole state, request window included, with the
// snapshot read from rc. It implements raft.FSM. Nothing of the previous
// state survives; subscribers see a Change with Restored set.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	version, payload, err := readSnapshot(rc)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.halt.Load(); h != nil {
		return h
	}
	s, requests, err := decodeSnapshot(version, payload, f.requests.size)
	if err != nil {
		return err
	}
	f.state, f.requests = s, requests
	f.configEpoch.Add(1)
	f.publishLocked(Change{Restored: true})
	return nil
}

// close ends every subscription.
func (f *FSM) close() { f.changes.close() }

// fsmSnapshot persists one immutable published state and the request
// window of the same point in the log.
type fsmSnapshot struct {
	state    *lifecycle.State
	requests []rememberedRequest
}

// Persist writes the versioned snapshot bytes. It implements
// raft.FSMSnapshot.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	payload, err := encodeSnapshot(s.state, s.requests)
	if err == nil {
		err = writeSnapshot(sink, payload)
	}
	if err != nil {
		return errors.Join(err, sink.Cancel())
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot; nothing is held.
func (s *fsmSnapshot) Release() {}
