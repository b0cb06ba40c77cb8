// Package testcluster runs cluster members in one test process: real TCP
// raft over TLS and real HTTP/2 API listeners on loopback, every member's
// certificate issued by one development CA (internal/testpki), each member
// closed when the test ends. Every member is a serve.Process, started by
// the composition root nspl serve starts its member with: its API listener
// serves the session protocol, the peer interconnect, cluster status,
// leave and remove as in production, and what the rig adds (listeners it
// bound itself, a fault layer's dialer) goes in through serve.Config. It
// finds the confirmed leader and its followers, names a member's session
// URL for remote clients, serves further API listeners (a token, the
// console) and a member's metrics listener, both wired by package serve.
// With Options.Faults, every member's connections to the others (raft,
// interconnect, joins, forwarded writes, probes) run through a fault layer
// the test controls (Net).
//
// With Options.Clocks, every member's time source is a
// timesource.Adjustable over the real clock that the test steps or pauses
// (Clock).
//
// It is for tests only and must never be imported by production code.
// Members run on the real clock: certificates, raft and the interconnect
// all need it. It waits for the cluster by polling under a bound (a
// timeout, never a sleep for time to pass).
package testcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/faultnet"
	"github.com/nspl-dev/nspl/internal/testpki"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/serve"
	"github.com/nspl-dev/nspl/server"
)

// startTimeout bounds one member's start.
const startTimeout = 30 * time.Second

// LogEnv is the environment variable that, when set, shows every member's
// logs at debug level on stderr instead of the quiet default.
const LogEnv = "NSPL_CLUSTER_LOG"

// Options configures a Cluster.
type Options struct {
	// Durable gives every member a data directory of its own under the
	// test's temporary directory, kept across restarts of the member.
	Durable bool
	// Logger receives the members' logs. Nil means stderr, quiet unless
	// LogEnv is set (killed members make raft log heartbeat failures).
	Logger *slog.Logger
	// Faults routes every member's connections to the other members
	// through a faultnet.Network (Net), each member a participant under
	// its node name.
	Faults bool
	// Clocks gives every member a timesource.Adjustable over the system
	// clock as its time source (Clock), kept across restarts of the member
	// as a host keeps its clock, so a test steps its UTC or pauses its
	// timers.
	Clocks bool
}

// Cluster is the set of members one test runs. All methods are safe for
// concurrent use.
type Cluster struct {
	t       testing.TB
	ca      *testpki.Authority
	root    string
	durable bool
	logger  *slog.Logger
	net     *faultnet.Network // nil unless Options.Faults
	clocks  bool

	mu      sync.Mutex
	members []*cluster.Member                  // running, in start order
	procs   map[*cluster.Member]*serve.Process // the process of each running member
	addrs   map[string][2]string               // name → raft, api address of its first start
	apiLns  map[string]net.Listener            // API address → listener bound by Config, not started yet
	mats    map[string]*pki.Material
	sources map[string]*timesource.Adjustable // with Options.Clocks
}

// New returns an empty cluster whose running members are closed when the
// test ends (their Close errors are not the test's: a test that kills
// members leaves the others without a quorum; see Close).
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	logger := opts.Logger
	if logger == nil {
		level := slog.LevelError + 4
		if os.Getenv(LogEnv) != "" {
			level = slog.LevelDebug
		}
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	c := &Cluster{
		t: t, ca: testpki.New(t), root: t.TempDir(), durable: opts.Durable, logger: logger,
		procs: make(map[*cluster.Member]*serve.Process), addrs: make(map[string][2]string),
		apiLns: make(map[string]net.Listener), mats: make(map[string]*pki.Material),
		clocks: opts.Clocks, sources: make(map[string]*timesource.Adjustable),
	}
	if opts.Faults {
		c.net = faultnet.New()
		t.Cleanup(c.net.Close) // after the members close (cleanups run last first)
	}
	t.Cleanup(func() { _ = c.Close() })
	t.Cleanup(c.closeUnstarted)
	return c
}

// closeUnstarted closes the API listeners Config bound for members that
// never started.
func (c *Cluster) closeUnstarted() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for addr, ln := range c.apiLns {
		_ = ln.Close()
		delete(c.apiLns, addr)
	}
}

// Net returns the fault layer the members' connections run through, nil
// unless Options.Faults.
func (c *Cluster) Net() *faultnet.Network { return c.net }

// Names returns the names of the running members, in start order.
func (c *Cluster) Names() []string {
	var out []string
	for _, m := range c.Live() {
		out = append(out, m.Node().Name())
	}
	return out
}

// Clock returns member name's time source, made on first use and kept
// across its restarts; nil unless Options.Clocks.
func (c *Cluster) Clock(name string) *timesource.Adjustable {
	if !c.clocks {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.sources[name]
	if !ok {
		a = timesource.NewAdjustable(timesource.System())
		c.sources[name] = a
	}
	return a
}

// CA returns the cluster's certificate authority, for client or outsider
// material.
func (c *Cluster) CA() *testpki.Authority { return c.ca }

// Logger returns the members' logger.
func (c *Cluster) Logger() *slog.Logger { return c.logger }

// Material returns node name's certificate material, issued once for
// 127.0.0.1 and reused on every start of the member.
func (c *Cluster) Material(name string) *pki.Material {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.mats[name]; ok {
		return m
	}
	m := c.ca.Node(name, "127.0.0.1")
	c.mats[name] = m
	return m
}

// Config returns the configuration of member name on fresh loopback
// listeners (a restarted member gets its first start's addresses back),
// bootstrapping or joining through join. The API listener is bound under
// cfg.APIAddr and kept for StartConfig, which serves it; one no member
// started on is closed when the test ends.
func (c *Cluster) Config(name string, bootstrap bool, join ...string) cluster.Config {
	c.t.Helper()
	c.mu.Lock()
	prev := c.addrs[name]
	apiLn := c.apiLns[prev[1]] // an earlier Config's, never started
	delete(c.apiLns, prev[1])
	c.mu.Unlock()
	raftLn := c.listen(prev[0])
	if apiLn == nil {
		apiLn = c.listen(prev[1])
	}
	c.mu.Lock()
	c.addrs[name] = [2]string{raftLn.Addr().String(), apiLn.Addr().String()}
	c.apiLns[apiLn.Addr().String()] = apiLn
	c.mu.Unlock()
	cfg := cluster.Config{
		Node: name, RaftListener: raftLn, APIAddr: apiLn.Addr().String(), Join: join, Bootstrap: bootstrap,
		Material: c.Material(name), Logger: c.logger, RaftLogLevel: slog.LevelError,
	}
	if a := c.Clock(name); a != nil {
		cfg.TimeSource = a
	}
	if c.durable {
		cfg.DataDir = filepath.Join(c.root, name)
	}
	if c.net != nil {
		c.net.Register(name, raftLn.Addr().String(), apiLn.Addr().String())
		cfg.Dial = c.net.Dialer(name)
	}
	return cfg
}

// listen binds addr, or a free loopback port when addr is empty.
func (c *Cluster) listen(addr string) net.Listener {
	c.t.Helper()
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
	c.t.Fatalf("testcluster: listen on %s: %v", addr, err)
	return nil
}

// Start starts member name from Config and waits for it, failing the
// test if it does not start.
func (c *Cluster) Start(name string, bootstrap bool, join ...string) *cluster.Member {
	c.t.Helper()
	m, err := c.StartConfig(c.Config(name, bootstrap, join...))
	if err != nil {
		c.t.Fatalf("testcluster: start %s: %v", name, err)
	}
	return m
}

// StartConfig starts a member from cfg and waits for it; a member that
// started is closed at the end of the test. It takes the place of a
// running member of the same name in Member and Live.
func (c *Cluster) StartConfig(cfg cluster.Config) (*cluster.Member, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	return c.StartContext(ctx, cfg)
}

// StartContext is StartConfig bounded by ctx instead of the rig's start
// timeout: a member whose start the test cancels does not start. The
// member runs as nspl serve runs it (serve.Start) on the API listener
// Config bound for cfg.APIAddr, or on a new one bound there.
func (c *Cluster) StartContext(ctx context.Context, cfg cluster.Config) (*cluster.Member, error) {
	c.mu.Lock()
	ln := c.apiLns[cfg.APIAddr]
	delete(c.apiLns, cfg.APIAddr)
	c.mu.Unlock()
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.APIAddr); err != nil {
			return nil, err
		}
	}
	p, err := serve.Start(ctx, serve.Config{Member: cfg, Listener: ln})
	if err != nil {
		return nil, err
	}
	m := p.Member()
	c.mu.Lock()
	c.members = append(slices.DeleteFunc(c.members, func(o *cluster.Member) bool { return o.Node().Name() == cfg.Node }), m)
	c.procs[m] = p
	c.mu.Unlock()
	return m, nil
}

// process returns the process of the running member m, failing the test
// when m is not one of the cluster's running members.
func (c *Cluster) process(m *cluster.Member) *serve.Process {
	c.t.Helper()
	c.mu.Lock()
	p := c.procs[m]
	c.mu.Unlock()
	if p == nil {
		c.t.Fatalf("testcluster: %s is not a running member of this cluster", m.Node().Name())
	}
	return p
}

// StartThree starts n1 (bootstrapping), then n2 and n3 joining through n1,
// and returns them in that order.
func (c *Cluster) StartThree() []*cluster.Member {
	c.t.Helper()
	n1 := c.Start("n1", true)
	return []*cluster.Member{n1, c.Start("n2", false, n1.APIAddr()), c.Start("n3", false, n1.APIAddr())}
}

// Member returns the running member name, nil when none runs.
func (c *Cluster) Member(name string) *cluster.Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.Node().Name() == name {
			return m
		}
	}
	return nil
}

// Forget stops tracking member name, which left the cluster and closed
// itself (cluster.Member.Leave), and stops its process's API listener, as
// nspl serve exits after a leave.
func (c *Cluster) Forget(name string) {
	if p := c.forget(name); p != nil {
		_ = p.Close() // the member's Close already ran, in its Leave
	}
}

// forget stops tracking member name and returns its process, nil when
// none runs.
func (c *Cluster) forget(name string) *serve.Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	var p *serve.Process
	c.members = slices.DeleteFunc(c.members, func(m *cluster.Member) bool {
		if m.Node().Name() != name {
			return false
		}
		p = c.procs[m]
		delete(c.procs, m)
		return true
	})
	return p
}

// Kill closes member name the way a dying process disappears: its
// listeners close and it says goodbye to nobody. It fails the test if the
// member does not run or does not close cleanly.
func (c *Cluster) Kill(name string) {
	c.t.Helper()
	p := c.forget(name)
	if p == nil {
		c.t.Fatalf("testcluster: kill %s: no such member runs", name)
	}
	if err := p.Close(); err != nil {
		c.t.Fatalf("testcluster: kill %s: %v", name, err)
	}
}

// Live returns the running members in start order.
func (c *Cluster) Live() []*cluster.Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.members)
}

// Close closes every running member, the last started first, and returns
// their errors. The test's cleanup calls it too (a second Close finds
// nothing to close); call it where the test asserts that the members close
// cleanly.
func (c *Cluster) Close() error {
	c.mu.Lock()
	members, procs := c.members, c.procs
	c.members, c.procs = nil, make(map[*cluster.Member]*serve.Process)
	c.mu.Unlock()
	var errs []error
	for i := len(members) - 1; i >= 0; i-- {
		errs = append(errs, procs[members[i]].Close())
	}
	return errors.Join(errs...)
}

// Leader waits for a member that is the confirmed leader and returns it.
func (c *Cluster) Leader() *cluster.Member {
	c.t.Helper()
	var out *cluster.Member
	c.Eventually(10*time.Second, "a confirmed leader", func() bool {
		for _, m := range c.Live() {
			if m.Node().IsLeader() {
				out = m
				return true
			}
		}
		return false
	})
	return out
}

// FollowersOf returns the running members other than leader, in start
// order.
func (c *Cluster) FollowersOf(leader *cluster.Member) []*cluster.Member {
	return slices.DeleteFunc(c.Live(), func(m *cluster.Member) bool { return m == leader })
}

// Follower returns the last of FollowersOf(leader), failing the test when
// leader is the only running member.
func (c *Cluster) Follower(leader *cluster.Member) *cluster.Member {
	c.t.Helper()
	fs := c.FollowersOf(leader)
	if len(fs) == 0 {
		c.t.Fatal("testcluster: no running member but the leader")
	}
	return fs[len(fs)-1]
}

// Eventually polls cond every few milliseconds until it holds or timeout
// passes (a bound on waiting for the cluster, not a sleep for time to
// pass), failing the test on timeout, and returns how long it took.
func (c *Cluster) Eventually(timeout time.Duration, what string, cond func() bool) time.Duration {
	c.t.Helper()
	start := time.Now()
	for {
		if cond() {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			c.t.Fatalf("waited %s for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// ServeSessions returns the URL of m's API listener, where its process
// serves the session protocol as nspl serve does (mutual TLS, SHOW CLUSTER
// STATUS of the member, statements it does not lead through the leader)
// until the member stops.
func (c *Cluster) ServeSessions(m *cluster.Member) string {
	c.t.Helper()
	return "https://" + c.process(m).Addr().String()
}

// ServeMetrics serves m's metrics listener (/metrics, /livez, /readyz of
// its node's registry) over plain HTTP on a loopback port until the test
// ends and returns its URL, wired as nspl serve --metrics-addr wires it
// (serve.ServeMetrics).
func (c *Cluster) ServeMetrics(m *cluster.Member) string {
	c.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatalf("testcluster: listen: %v", err)
	}
	c.t.Cleanup(serve.ServeMetrics(ln, m.Node().MetricsHandler(), nil, c.logger))
	return "http://" + ln.Addr().String()
}

// ClientTLS returns the TLS configuration of client name of the cluster's
// CA, to dial a ServeSessions URL with.
func (c *Cluster) ClientTLS(name string) *tls.Config {
	return c.ca.Client(name).ClientConfig("", "")
}

// APIOptions configures ServeAPI.
type APIOptions struct {
	// Addr is the listener's address; empty picks a free loopback port.
	// A member started again serves on its old address by giving it.
	Addr string
	// Token admits clients presenting it, as nspl serve --token-file.
	Token string
	// Console serves the web console under /console/.
	Console bool
	// ConsoleLogoutFile keeps the console's logouts across restarts, as
	// nspl serve keeps them in its data directory.
	ConsoleLogoutFile string
}

// API is a further API listener of a member, its server built by the
// member's process as it built its own (serve.Process.NewServer): the
// session protocol, the peer interconnect, cluster status, leave and
// remove, and optionally the console, over TLS that verifies client
// certificates when given.
type API struct {
	// URL is https://ADDR.
	URL string
	// Addr is the listener's address.
	Addr string

	srv  *server.Server
	done chan struct{}
	once sync.Once
}

// ServeAPI serves m's API listener until Close or the end of the test.
func (c *Cluster) ServeAPI(m *cluster.Member, o APIOptions) *API {
	c.t.Helper()
	srv, err := c.process(m).NewServer(server.Config{Token: o.Token, Console: o.Console, ConsoleLogoutFile: o.ConsoleLogoutFile})
	if err != nil {
		c.t.Fatalf("testcluster: API server: %v", err)
	}
	addr := o.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		c.t.Fatalf("testcluster: listen on %s: %v", addr, err)
	}
	a := &API{URL: "https://" + ln.Addr().String(), Addr: ln.Addr().String(), srv: srv, done: make(chan struct{})}
	go func() { // owned: ends at Close
		defer close(a.done)
		_ = srv.Serve(ln)
	}()
	c.t.Cleanup(a.Close)
	return a
}

// Sessions returns the number of sessions the listener has open.
func (a *API) Sessions() int { return a.srv.Sessions() }

// Close stops the listener at once, as a dying process's would, and
// waits for it. It is safe to call more than once.
func (a *API) Close() {
	a.once.Do(func() {
		_ = a.srv.Close()
		<-a.done
	})
}
