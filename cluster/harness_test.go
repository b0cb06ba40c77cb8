package cluster

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/internal/testpki"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/runtime"
)

// harness runs cluster members in one test process on loopback: real TCP
// raft over TLS, real HTTP/2 peer listeners, one development CA.
type harness struct {
	t       testing.TB
	ca      *testpki.Authority
	root    string
	durable bool // members keep a data directory
	logger  *slog.Logger

	mu      sync.Mutex
	members map[string]*Member
	addrs   map[string][2]string // name → raft, api address of its first start
	mats    map[string]*pki.Material
}

func newHarness(t testing.TB, durable bool) *harness {
	t.Helper()
	ca := testpki.New(t)
	// Quiet by default: killed members make raft log heartbeat failures.
	level := slog.LevelError + 4
	if os.Getenv("NSPL_CLUSTER_LOG") != "" {
		level = slog.LevelDebug
	}
	h := &harness{
		t: t, ca: ca, root: t.TempDir(), durable: durable,
		logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
		members: make(map[string]*Member), addrs: make(map[string][2]string), mats: make(map[string]*pki.Material),
	}
	t.Cleanup(h.closeAll)
	return h
}

func (h *harness) material(name string) *pki.Material {
	h.mu.Lock()
	defer h.mu.Unlock()
	if m, ok := h.mats[name]; ok {
		return m
	}
	m := h.ca.Node(name, "127.0.0.1")
	h.mats[name] = m
	return m
}

// listen binds addr, or a free loopback port when addr is empty. A
// restarted member gets its previous addresses back.
func (h *harness) listen(addr string) net.Listener {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // a just-closed port can take a moment to free
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(h.t, err)
	return nil
}

func (h *harness) config(name string, bootstrap bool, join []string) Config {
	h.mu.Lock()
	prev := h.addrs[name]
	h.mu.Unlock()
	raftLn, apiLn := h.listen(prev[0]), h.listen(prev[1])
	h.mu.Lock()
	h.addrs[name] = [2]string{raftLn.Addr().String(), apiLn.Addr().String()}
	h.mu.Unlock()
	cfg := Config{
		Node: name, RaftListener: raftLn, Listener: apiLn, Join: join, Bootstrap: bootstrap,
		Material: h.material(name), Logger: h.logger, RaftLogLevel: slog.LevelError,
	}
	if h.durable {
		cfg.DataDir = filepath.Join(h.root, name)
	}
	return cfg
}

// start starts one member and waits for it.
func (h *harness) start(name string, bootstrap bool, join ...string) *Member {
	h.t.Helper()
	m, err := h.startConfig(h.config(name, bootstrap, join))
	require.NoError(h.t, err)
	return m
}

func (h *harness) startConfig(cfg Config) (*Member, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.members[cfg.Node] = m
	h.mu.Unlock()
	return m, nil
}

// startThree starts n1 (bootstrap), then n2 and n3 joining through n1.
func (h *harness) startThree() {
	h.t.Helper()
	n1 := h.start("n1", true)
	h.start("n2", false, n1.APIAddr())
	h.start("n3", false, n1.APIAddr())
}

func (h *harness) member(name string) *Member {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.members[name]
}

// kill closes a member the way a dying process disappears: its listeners
// close and it says goodbye to nobody.
func (h *harness) kill(name string) {
	h.mu.Lock()
	m := h.members[name]
	delete(h.members, name)
	h.mu.Unlock()
	require.NoError(h.t, m.Close())
}

func (h *harness) live() []*Member {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Member, 0, len(h.members))
	for _, m := range h.members {
		out = append(out, m)
	}
	return out
}

func (h *harness) closeAll() {
	for _, m := range h.live() {
		_ = m.Close()
	}
	h.mu.Lock()
	h.members = map[string]*Member{}
	h.mu.Unlock()
}

// leader returns the member that is the confirmed leader.
func (h *harness) leader() *Member {
	h.t.Helper()
	var out *Member
	h.eventually(10*time.Second, "a confirmed leader", func() bool {
		for _, m := range h.live() {
			if m.Node().IsLeader() {
				out = m
				return true
			}
		}
		return false
	})
	return out
}

// followersOf returns the live members other than leader, in h.live's
// order.
func (h *harness) followersOf(leader *Member) []*Member {
	var out []*Member
	for _, m := range h.live() {
		if m != leader {
			out = append(out, m)
		}
	}
	return out
}

// follower returns the last of followersOf(leader), failing the test when
// leader is the only live member.
func (h *harness) follower(leader *Member) *Member {
	h.t.Helper()
	fs := h.followersOf(leader)
	if len(fs) == 0 {
		h.t.Fatal("no live member but the leader")
	}
	return fs[len(fs)-1]
}

// eventually polls cond every few milliseconds until it holds or timeout
// passes (a bound on waiting for the cluster, not a sleep for time to pass)
// and returns how long it took.
func (h *harness) eventually(timeout time.Duration, what string, cond func() bool) time.Duration {
	h.t.Helper()
	start := time.Now()
	for {
		if cond() {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			h.t.Fatalf("waited %s for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// startPaced creates a paced domain through m (any member: a follower
// forwards) and starts it AT NOW.
func (h *harness) startPaced(m *Member, domain string, period time.Duration) lifecycle.Domain {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := m.Node()
	_, err := n.CreateDomain(ctx, planner.CreateDomain{Name: domain, Pace: lifecycle.Paced, Period: uint64(period), Skew: uint64(period)})
	require.NoError(h.t, err)
	out, err := n.Start(ctx, domain, planner.Start{Mode: planner.StartAtNow, Rate: 1})
	require.NoError(h.t, err)
	require.True(h.t, out.Domain.Authority.Assigned())
	return out.Domain
}

// domain reads the committed domain on m.
func domainOn(t testing.TB, m *Member, name string) lifecycle.Domain {
	t.Helper()
	d, err := m.Node().Domain(name)
	require.NoError(t, err)
	return d
}

// tickedBy reports whether m accepted a tick of domain produced under the
// authority identity id.
func tickedBy(m *Member, domain string, fence lifecycle.AuthorityFence) (runtime.Tick, bool) {
	in := m.Node().Installation(domain)
	if in.Authority() != fence {
		return runtime.Tick{}, false
	}
	tk := m.Node().Progress(domain)
	return tk, tk.ID > 0 && tk.Generation == in.Generation()
}
