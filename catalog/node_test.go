package catalog

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

var bg = context.Background()

// TestOpenToFirstWrite holds that a node's first write after Open commits,
// in memory and on disk. How long it takes is BenchmarkOpenToFirstWrite's
// figure: a test asserting a duration fails whenever the machine is busy.
func TestOpenToFirstWrite(t *testing.T) {
	for _, store := range []string{"memory", "data-dir"} {
		t.Run(store, func(t *testing.T) {
			cfg := Config{NodeName: "local", Logger: quietLogger(t)}
			if store == "data-dir" {
				cfg.DataDir = t.TempDir()
			}
			n, err := Open(bg, cfg)
			require.NoError(t, err)
			res, err := n.Propose(bg, createCmd("prod", lifecycle.Paced))
			require.NoError(t, err)
			require.NoError(t, res.Err())
			require.NoError(t, n.Close())
		})
	}
}

// TestEmbeddedNodeElectsWithoutHeartbeatTimeout holds that the embedded
// node, the only voter of its configuration, elects itself at once rather
// than when raft's heartbeat timeout passes: with the timeout raised to an
// hour, Open still returns well within openNode's bound, fresh and on a
// reopened data directory.
func TestEmbeddedNodeElectsWithoutHeartbeatTimeout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dir    bool
		reopen bool
	}{
		{name: "memory"},
		{name: "data-dir", dir: true},
		{name: "reopened data-dir", dir: true, reopen: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{startHeartbeatTimeout: time.Hour}
			if tc.dir {
				cfg.DataDir = t.TempDir()
			}
			if tc.reopen {
				require.NoError(t, openNode(t, Config{DataDir: cfg.DataDir}).Close())
			}
			n := openNode(t, cfg)
			require.True(t, n.IsLeader())
			res, err := n.Propose(bg, createCmd("prod", lifecycle.Paced))
			require.NoError(t, err)
			require.NoError(t, res.Err())
		})
	}
}

func TestOpenRegistersIncarnation(t *testing.T) {
	n := openNode(t, Config{NodeName: "alpha", APIAddress: "127.0.0.1:7070"})
	require.True(t, n.IsLeader())
	reg, ok := n.State().Node("alpha")
	require.True(t, ok)
	require.Equal(t, n.Incarnation(), reg.Incarnation)
	require.Equal(t, n.ServerID(), reg.RaftID)
	require.Equal(t, "127.0.0.1:7070", reg.APIAddr)
	require.NotEmpty(t, reg.RaftAddr)
	require.Equal(t, lifecycle.Identity{Node: "alpha", Incarnation: n.Incarnation()}, n.Identity())
	require.Equal(t, "alpha", n.Name())
	voters, err := n.Voters()
	require.NoError(t, err)
	require.Equal(t, []string{n.ServerID()}, voters)
	require.Equal(t, []string{"alpha"}, n.State().VoterNames(voters))

	available, voterNames, err := n.AuthorityInputs(n.State())
	require.NoError(t, err)
	require.Equal(t, []string{"alpha"}, voterNames)
	require.Equal(t, n.State().Incarnations(), available)
	id, ok := lifecycle.SelectAuthority("prod", available, voterNames)
	require.True(t, ok)
	require.Equal(t, n.Identity(), id)

	other := openNode(t, Config{NodeName: "alpha"})
	require.NotEqual(t, n.Incarnation(), other.Incarnation())
	require.NotEqual(t, n.ServerID(), other.ServerID(), "an in-memory node has a fresh server id")
}

func TestProposeResults(t *testing.T) {
	n := openNode(t, Config{})
	rev := n.Revision()
	res, err := n.Propose(bg, createCmd("prod", lifecycle.Paced))
	require.NoError(t, err)
	require.Equal(t, lifecycle.Result{Revision: rev + 1, Changed: true}, res)
	require.Equal(t, rev+1, n.Revision())

	// A domain error is a result, not a Propose error.
	res, err = n.Propose(bg, createCmd("prod", lifecycle.Paced))
	require.NoError(t, err)
	require.ErrorIs(t, res.Err(), lifecycle.ErrDomainExists)
	require.Equal(t, rev+1, res.Revision)

	// IF NOT EXISTS succeeds quietly.
	quiet := createCmd("prod", lifecycle.Paced)
	quiet.CreateDomain.IfNotExists = true
	res, err = n.Propose(bg, quiet)
	require.NoError(t, err)
	require.Equal(t, lifecycle.Result{Revision: rev + 1}, res)

	id := n.Identity()
	res, err = n.Propose(bg, startCmd("prod", &id, 1000, 2000, 60))
	require.NoError(t, err)
	require.NoError(t, res.Err())
	d, ok := n.State().Domain("prod")
	require.True(t, ok)
	require.Equal(t, lifecycle.Running, d.Status)
	require.Equal(t, uint64(1), d.Generation)
	require.Equal(t, id, d.Authority.Identity())
}

func TestProposeErrors(t *testing.T) {
	n := openNode(t, Config{})
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	expired, cancel2 := context.WithDeadline(bg, time.Unix(0, 0))
	defer cancel2()

	tests := []struct {
		name string
		ctx  context.Context
		cmd  lifecycle.Command
		want error
	}{
		{"invalid command", bg, lifecycle.Command{Op: "warp"}, lifecycle.ErrInvalidCommand},
		{"cancelled before proposing", cancelled, createCmd("a", lifecycle.Unpaced), context.Canceled},
		{"deadline already passed", expired, createCmd("a", lifecycle.Unpaced), context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev := n.Revision()
			_, err := n.Propose(tt.ctx, tt.cmd)
			require.ErrorIs(t, err, tt.want)
			require.Equal(t, rev, n.Revision(), "nothing was committed")
		})
	}

	t.Run("leadership not confirmed", func(t *testing.T) {
		term := n.confirmedTerm.Swap(0)
		defer n.confirmedTerm.Store(term)
		require.False(t, n.IsLeader())
		_, err := n.Propose(bg, createCmd("a", lifecycle.Unpaced))
		require.ErrorIs(t, err, ErrLeadershipUnconfirmed)
	})

	t.Run("deadline in the future", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		res, err := n.Propose(ctx, createCmd("with-deadline", lifecycle.Unpaced))
		require.NoError(t, err)
		require.NoError(t, res.Err())
	})

	t.Run("after close", func(t *testing.T) {
		require.NoError(t, n.Close())
		require.NoError(t, n.Close(), "Close is idempotent")
		_, err := n.Propose(bg, createCmd("b", lifecycle.Unpaced))
		require.Error(t, err)
		require.ErrorIs(t, err, ErrShutdown)
		require.NotErrorIs(t, err, ErrNotLeader, "a closed node must not send the caller looking for a leader")
		ctx, cancel := context.WithTimeout(bg, time.Minute)
		defer cancel()
		_, err = n.Propose(ctx, createCmd("b", lifecycle.Unpaced))
		require.Error(t, err)
		require.ErrorIs(t, err, ErrShutdown)
		require.NotErrorIs(t, err, ErrNotLeader, "a closed node must not send the caller looking for a leader")
	})
}

func TestTranslate(t *testing.T) {
	n := openNode(t, Config{})
	tests := []struct {
		name     string
		err      error
		enqueued bool
		want     []error
		notWant  error
	}{
		{"not leader", raft.ErrNotLeader, false, []error{ErrNotLeader}, ErrOutcomeUnknown},
		{"transfer in progress", raft.ErrLeadershipTransferInProgress, false, []error{ErrNotLeader}, nil},
		{"leadership lost", raft.ErrLeadershipLost, true, []error{ErrLeadershipLost, ErrOutcomeUnknown}, nil},
		{"shutdown before enqueue", raft.ErrRaftShutdown, false, []error{ErrShutdown}, ErrOutcomeUnknown},
		{"shutdown after enqueue", raft.ErrRaftShutdown, true, []error{ErrShutdown, ErrOutcomeUnknown}, nil},
		{"enqueue timeout", raft.ErrEnqueueTimeout, true, []error{ErrTimeout}, ErrOutcomeUnknown},
		{"other after enqueue", raft.ErrAbortedByRestore, true, []error{ErrOutcomeUnknown}, nil},
		{"other before enqueue", raft.ErrUnsupportedProtocol, false, nil, ErrOutcomeUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := n.translate(tt.err, tt.enqueued)
			require.Error(t, got)
			for _, w := range tt.want {
				require.ErrorIs(t, got, w)
			}
			if tt.notWant != nil {
				require.NotErrorIs(t, got, tt.notWant)
			}
			require.NotErrorIs(t, got, tt.err, "raft's error must not leak through")
		})
	}
	require.NoError(t, n.translate(nil, true))

	var nl *NotLeaderError
	require.ErrorAs(t, n.translate(raft.ErrNotLeader, false), &nl)
	require.Equal(t, n.ServerID(), nl.Leader, "this node is the leader it knows of")
	require.Contains(t, nl.Error(), n.ServerID())
	require.Equal(t, "this catalog node is not the leader and no leader is known; retry after the election",
		(&NotLeaderError{}).Error())
}

func TestOnChangeRunsBeforeProposeReturns(t *testing.T) {
	var mu sync.Mutex
	var revs []uint64
	var restored int
	n := openNode(t, Config{OnChange: func(c Change) {
		mu.Lock()
		defer mu.Unlock()
		revs = append(revs, c.Revision)
		if c.Restored {
			restored++
		}
	}})
	const writers, each = 8, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				name := string(rune('a'+w)) + string(rune('a'+i))
				res, err := n.Propose(bg, createCmd(name, lifecycle.Unpaced))
				if err != nil || res.Err() != nil {
					t.Errorf("propose %s: %v %v", name, err, res.Err())
					return
				}
				mu.Lock()
				last := revs[len(revs)-1]
				mu.Unlock()
				if last < res.Revision {
					t.Errorf("OnChange saw revision %d after Propose returned %d", last, res.Revision)
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(revs); i++ {
		require.Greater(t, revs[i], revs[i-1], "changes arrive in commit order")
	}
	require.Equal(t, n.Revision(), revs[len(revs)-1])
	require.Zero(t, restored)
}

func TestSubscribeAndWaitRevision(t *testing.T) {
	n := openNode(t, Config{})
	sub := n.Subscribe()
	first := <-sub.C()
	require.Equal(t, n.Revision(), first.Revision)

	res, err := n.Propose(bg, createCmd("a", lifecycle.Unpaced))
	require.NoError(t, err)
	got := <-sub.C()
	require.Equal(t, res.Revision, got.Revision)
	_, ok := got.State.Domain("a")
	require.True(t, ok)

	done := make(chan *lifecycle.State, 1)
	go func() {
		s, err := n.WaitRevision(bg, res.Revision+1)
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	_, err = n.Propose(bg, createCmd("b", lifecycle.Unpaced))
	require.NoError(t, err)
	s := <-done
	require.GreaterOrEqual(t, s.Revision(), res.Revision+1)

	s, err = n.WaitRevision(bg, 1)
	require.NoError(t, err)
	require.Same(t, n.State(), s, "a reached revision returns at once")

	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = n.WaitRevision(ctx, 1<<60)
	require.ErrorIs(t, err, context.Canceled)

	require.NoError(t, n.Close())
	for range sub.C() { // Close ends subscriptions: this loop terminates
	}
	_, err = n.WaitRevision(bg, 1<<60)
	require.ErrorIs(t, err, ErrShutdown)
}

// TestTransactionThroughRaft commits BEGIN … COMMIT as one raft entry:
// every step applies or none does, in one revision.
func TestTransactionThroughRaft(t *testing.T) {
	n := openNode(t, Config{})
	id := n.Identity()
	_, err := n.Propose(bg, createCmd("prod", lifecycle.Paced))
	require.NoError(t, err)
	start := func(wall int64) lifecycle.Step {
		return lifecycle.Step{Op: lifecycle.StepStart, Start: &lifecycle.ResolvedStart{
			Point:     lifecycle.StartPoint{Mode: lifecycle.StartNow, LogicalStart: wall, Rate: 2, WallStartedAt: wall},
			Authority: &id,
		}}
	}
	place := lifecycle.RequireColocation
	tx := func(steps ...lifecycle.Step) lifecycle.Command {
		return lifecycle.Command{Op: lifecycle.OpTransaction, Transaction: &lifecycle.Transaction{Domain: "prod", Steps: steps}}
	}

	before := n.State()
	rev := n.Revision()
	// START, ALTER, START: the third step fails, so nothing applies.
	res, err := n.Propose(bg, tx(start(10), lifecycle.Step{Op: lifecycle.StepAlterPlacement, Placement: &place}, start(20)))
	require.NoError(t, err)
	require.ErrorIs(t, res.Err(), lifecycle.ErrAlreadyRunning)
	require.Equal(t, 3, res.Failure.Step)
	require.Equal(t, rev, n.Revision())
	require.Same(t, before, n.State(), "a refused transaction publishes nothing")

	// START, ALTER, STOP, START: all apply, as one revision.
	res, err = n.Propose(bg, tx(start(10), lifecycle.Step{Op: lifecycle.StepAlterPlacement, Placement: &place},
		lifecycle.Step{Op: lifecycle.StepStop}, start(30)))
	require.NoError(t, err)
	require.NoError(t, res.Err())
	require.Equal(t, rev+1, res.Revision)
	d, _ := n.State().Domain("prod")
	require.Equal(t, uint64(2), d.Generation)
	require.Equal(t, lifecycle.RequireColocation, d.Placement)
	require.Equal(t, int64(30), d.Mapping.WallStartedAt)
	require.Equal(t, rev+1, d.Revision)
}

// TestHaltedNodeRefusesWrites commits an entry that does not decode: the
// FSM halts, the node shuts raft down, and every later write says so.
func TestHaltedNodeRefusesWrites(t *testing.T) {
	n := openNode(t, Config{Logger: quietLogger(t)})
	_, err := n.Propose(bg, createCmd("a", lifecycle.Unpaced))
	require.NoError(t, err)
	resp, err := n.apply(bg, []byte("not a command"), true)
	require.NoError(t, err, "the entry itself commits")
	require.ErrorIs(t, resp.(error), ErrHalted)
	<-n.fsm.Halted()
	_, err = n.Propose(bg, createCmd("b", lifecycle.Unpaced))
	require.ErrorIs(t, err, ErrHalted)
	require.ErrorIs(t, n.Snapshot(), ErrHalted)
	require.Len(t, n.State().Domains(), 1)
	require.NoError(t, n.Close())
}

func TestOpenErrors(t *testing.T) {
	_, err := Open(bg, Config{})
	require.ErrorIs(t, err, ErrConfig)
	_, err = Open(bg, Config{NodeName: "x", SnapshotInterval: time.Millisecond})
	require.ErrorIs(t, err, ErrConfig)

	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, catalogDir), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, catalogDir, serverIDFile), []byte("bad"), 0o600))
	_, err = Open(bg, Config{NodeName: "x", DataDir: dir, Logger: quietLogger(t)})
	require.ErrorIs(t, err, ErrDataDir)

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = Open(bg, Config{NodeName: "x", DataDir: file, Logger: quietLogger(t)})
	require.ErrorIs(t, err, ErrDataDir, "a data dir that is a file")

	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = Open(ctx, Config{NodeName: "x", DataDir: t.TempDir(), Logger: quietLogger(t)})
	require.ErrorIs(t, err, context.Canceled)
}

func TestDataDirInUse(t *testing.T) {
	old := dataDirLockTimeout
	dataDirLockTimeout = 20 * time.Millisecond
	defer func() { dataDirLockTimeout = old }()
	dir := t.TempDir()
	openNode(t, Config{DataDir: dir})
	_, err := Open(bg, Config{NodeName: "second", DataDir: dir, Logger: quietLogger(t)})
	require.ErrorIs(t, err, ErrDataDir)
	require.ErrorContains(t, err, "locked by another process")
}

// TestReconcileMovesAuthorityToVoter starts a paced domain on a registered
// node that is not a raft voter: the leader's reconciliation moves the
// authority to the eligible voter with a compare-and-set, keeping the
// generation and mapping.
func TestReconcileMovesAuthorityToVoter(t *testing.T) {
	n := openNode(t, Config{})
	for _, c := range []lifecycle.Command{
		registerCmd("outsider", 5),
		createCmd("prod", lifecycle.Paced),
		startCmd("prod", &lifecycle.Identity{Node: "outsider", Incarnation: 5}, 100, 200, 2),
	} {
		res, err := n.Propose(bg, c)
		require.NoError(t, err)
		require.NoError(t, res.Err())
	}
	s := waitFor(t, n, func(s *lifecycle.State) bool {
		d, _ := s.Domain("prod")
		return d.Authority.Identity() == n.Identity()
	})
	d, _ := s.Domain("prod")
	require.Equal(t, uint64(1), d.Generation)
	require.Equal(t, uint64(2), d.Authority.Revision, "start set revision 1, the move revision 2")
	require.Equal(t, int64(200), d.Mapping.LogicalStart)

	// Stopping revokes; a stopped domain is not reconciled again.
	res, err := n.Propose(bg, stopCmd("prod"))
	require.NoError(t, err)
	require.NoError(t, res.Err())
	d, _ = n.State().Domain("prod")
	require.False(t, d.Authority.Assigned())
}

// TestCloseWhileProposing closes the node under concurrent writers, some
// with cancellable contexts: every Propose returns, nothing is left
// waiting (goleak checks the goroutines after the package's tests).
func TestCloseWhileProposing(t *testing.T) {
	n := openNode(t, Config{DataDir: t.TempDir()})
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	var wg sync.WaitGroup
	started := make(chan struct{}, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := bg
			if w%2 == 0 {
				c = ctx
			}
			for i := 0; ; i++ {
				_, err := n.Propose(c, createCmd(string(rune('a'+w))+time.Duration(i).String(), lifecycle.Unpaced))
				if i == 0 {
					started <- struct{}{}
				}
				if err != nil {
					if !errors.Is(err, ErrShutdown) && !errors.Is(err, ErrOutcomeUnknown) &&
						!errors.Is(err, ErrNotLeader) && !errors.Is(err, context.Canceled) {
						t.Errorf("unexpected error %v", err)
					}
					return
				}
			}
		}()
	}
	for range 16 {
		<-started
	}
	cancel()
	require.NoError(t, n.Close())
	wg.Wait()
}

// TestDataDirServerIDMustMatchLog replaces a data directory's server id: the
// log's configuration does not name it, so Open refuses at once instead of
// waiting for an election it cannot win.
func TestDataDirServerIDMustMatchLog(t *testing.T) {
	dir := t.TempDir()
	n, err := Open(bg, Config{NodeName: "local", DataDir: dir, Logger: quietLogger(t)})
	require.NoError(t, err)
	old := n.ServerID()
	require.NoError(t, n.Close())
	path := filepath.Join(dir, catalogDir, serverIDFile)
	require.NoError(t, os.Remove(path))

	_, err = Open(bg, Config{NodeName: "local", DataDir: dir, Logger: quietLogger(t)})
	require.ErrorIs(t, err, ErrDataDir)
	require.ErrorContains(t, err, old)
	require.ErrorContains(t, err, "restore the server-id file")
}

// TestRaftLogsReachSlog checks the wiring: raft's own output arrives in the
// configured slog logger with its attributes.
func TestRaftLogsReachSlog(t *testing.T) {
	var mu sync.Mutex
	var records []slog.Record
	h := &recordingHandler{mu: &mu, records: &records}
	n := openNode(t, Config{Logger: slog.New(h)})
	require.NoError(t, n.Close())
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, r := range records {
		if r.Message != "entering leader state" {
			continue
		}
		attrs := map[string]string{}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value.String()
			return true
		})
		require.Contains(t, attrs["leader"], n.ServerID())
		found = true
	}
	require.True(t, found, "raft's leader message was logged through slog")
}

type recordingHandler struct {
	mu      *sync.Mutex
	records *[]slog.Record
	attrs   []slog.Attr
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.attrs...)
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.records = append(*h.records, r)
	return nil
}

func (h *recordingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &recordingHandler{mu: h.mu, records: h.records, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *recordingHandler) WithGroup(string) slog.Handler { return h }

// stuckFuture is a raft future that never completes until release is
// closed, as hashicorp/raft v1.7.3 leaves a configuration change it has not
// taken from its queue when the configuration in force has not committed.
type stuckFuture struct{ release chan struct{} }

func (f stuckFuture) Error() error  { <-f.release; return raft.ErrRaftShutdown }
func (f stuckFuture) Index() uint64 { return 0 }

// TestCloseBoundedWithMembershipChangeInFlight holds Close to its bound
// while a membership change waits on a raft future that never completes.
func TestCloseBoundedWithMembershipChangeInFlight(t *testing.T) {
	for _, store := range []string{"memory", "data-dir"} {
		t.Run(store, func(t *testing.T) {
			cfg := Config{NodeName: "local", Logger: quietLogger(t), CloseTimeout: 100 * time.Millisecond}
			if store == "data-dir" {
				cfg.DataDir = t.TempDir()
			}
			n, err := Open(bg, cfg)
			require.NoError(t, err)
			stuck := stuckFuture{release: make(chan struct{})}
			defer close(stuck.release) // lets the abandoned waiter end, for goleak
			ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
			defer cancel()
			err = n.changeConfiguration(ctx, func(time.Duration) raft.IndexFuture { return stuck })
			require.ErrorIs(t, err, ErrOutcomeUnknown)

			closed := make(chan error, 1)
			go func() { closed <- n.Close() }()
			select {
			case err := <-closed:
				require.NoError(t, err)
			case <-time.After(time.Minute): // generous: the bound is two CloseTimeouts
				t.Fatal("Close did not return while a membership change was in flight")
			}
			require.ErrorIs(t, n.AddVoter(bg, "other", "other:1"), ErrShutdown)
		})
	}
}
