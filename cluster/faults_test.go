package cluster_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/client"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/history"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// faultOpTimeout bounds one client operation; an operation that runs out
// of it is recorded with an unknown outcome.
const faultOpTimeout = 4 * time.Second

// faultChecker bounds Porcupine's search of one history; a history it
// cannot decide within it is reported undecided, not passed.
const faultChecker = 60 * time.Second

// histClient is one session of a recorded history: it issues catalog
// operations through one member and records each operation's invocation
// and completion.
type histClient struct {
	id    int
	m     *cluster.Member
	s     statementRunner
	level history.Level
	rec   *history.Recorder
	// plantLocalRead reads at the local level while recording the read as
	// linearizable: the planted bug of a linearizable read answered from
	// local state.
	plantLocalRead bool
	// plantEarlyAck records every write as acknowledged the moment it is
	// sent, whatever becomes of it: the planted bug of a write
	// acknowledged before it commits.
	plantEarlyAck bool
	// plantHalfTxn queues only the first step of a transaction and
	// records the transaction whole as committed: the planted bug of a
	// transaction half applied.
	plantHalfTxn bool
}

// statementRunner is a session as a client holds it: a member's session
// in process, or the Go client over the remote protocol.
type statementRunner interface {
	ExecText(ctx context.Context, text string) ([]wire.Result, error)
	Close() error
}

// faultClients is the participant every history client dials the members'
// session listeners as, when the run routes them through the fault layer.
const faultClients = "clients"

// newHistClient opens a session on m whose reads are at level: over the
// remote protocol to url when it is not empty (through dial when it is
// not nil), else in process.
func newHistClient(t *testing.T, id int, m *cluster.Member, url string, tlsConf *tls.Config, dial dialFunc, level history.Level, rec *history.Recorder, plantLocalRead bool) *histClient {
	rc := session.ReadLinearizable
	if level == history.Local || plantLocalRead {
		rc = session.ReadLocal
	}
	c := &histClient{id: id, m: m, level: level, rec: rec, plantLocalRead: plantLocalRead}
	if url == "" {
		c.s = session.New(m.Node(), session.Options{ReadConsistency: rc})
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), faultOpTimeout)
	defer cancel()
	cfg := client.Config{URLs: []string{url}, TLS: tlsConf, ReadConsistency: rc}
	if dial != nil {
		cfg.Transport = &http.Transport{Protocols: pki.HTTP2Only(false), TLSClientConfig: tlsConf.Clone(), DialContext: dial,
			ForceAttemptHTTP2: true, TLSHandshakeTimeout: faultOpTimeout}
	}
	cl, err := client.Dial(ctx, cfg)
	if err != nil {
		t.Logf("client %d: dial %s: %v", id, url, err)
		return nil
	}
	c.s = cl
	return c
}

func (c *histClient) close() { _ = c.s.Close() }

// dialFunc dials a connection, as faultnet.Network.Dialer returns one.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// refusedStep returns the one-based transaction step a refusal names, 0
// when it names none: from the lifecycle error in process, from the
// message the operator reads over the wire (which carries the code and
// the message, not the step).
func refusedStep(err error) int {
	if le := lifecycle.AsError(err); le != nil && le.Step > 0 {
		return le.Step
	}
	msg := err.Error()
	i := strings.Index(msg, "transaction step ")
	if i < 0 {
		return 0
	}
	var n int
	if _, err := fmt.Sscanf(msg[i:], "transaction step %d", &n); err != nil {
		return 0
	}
	return n
}

// stepStatement is the statement that queues one transaction step.
func stepStatement(st history.Step) string {
	switch st.Kind {
	case history.Start:
		return "START AT NOW;"
	case history.Stop:
		return "STOP;"
	default:
		return "ALTER DOMAIN SET PLACEMENT " + st.Placement + ";"
	}
}

// txn runs BEGIN, the steps and COMMIT on in.Domain and records them as
// one operation from the COMMIT (the queued steps touch no catalog until
// then). A transaction whose BEGIN or a step the serving node refuses
// (it checks them against its own installed state, which may lag) is
// reverted and not recorded: nothing was sent to the catalog. A COMMIT
// refused for a domain rule is Failed with the step it names; a COMMIT
// that finds no transaction open (its session was lost and the client
// reconnected, perhaps after sending it) or fails otherwise is Unknown.
func (c *histClient) txn(ctx context.Context, in history.Input) history.Outcome {
	if _, err := c.s.ExecText(ctx, "USE "+in.Domain+"; BEGIN;"); err != nil {
		_, _ = c.s.ExecText(ctx, "REVERT;")
		return 0
	}
	steps := in.Steps
	if c.plantHalfTxn {
		steps = steps[:1]
	}
	for _, st := range steps {
		if _, err := c.s.ExecText(ctx, stepStatement(st)); err != nil {
			_, _ = c.s.ExecText(ctx, "REVERT;")
			return 0
		}
	}
	done := c.rec.Invoke(c.id, in)
	if c.plantEarlyAck {
		done(history.Output{Outcome: history.OK})
		_, _ = c.s.ExecText(ctx, "COMMIT;")
		return history.OK
	}
	_, err := c.s.ExecText(ctx, "COMMIT;")
	out := history.Output{Outcome: history.OK}
	if err != nil {
		out.Outcome = history.Unknown
		if r, ok := refusal(err); ok {
			out = history.Output{Outcome: history.Failed, Refusal: r, Step: refusedStep(err)}
		}
	}
	done(out)
	return out.Outcome
}

// refusal maps a write's error to the domain rule it reports, or false
// when the error does not say whether the write took effect.
func refusal(err error) (history.Refusal, bool) {
	switch {
	case errors.Is(err, lifecycle.ErrDomainExists):
		return history.RefusedExists, true
	case errors.Is(err, lifecycle.ErrDomainNotFound):
		return history.RefusedNotFound, true
	case errors.Is(err, lifecycle.ErrDomainRunning):
		return history.RefusedRunning, true
	case errors.Is(err, lifecycle.ErrAlreadyRunning):
		return history.RefusedAlreadyRunning, true
	case errors.Is(err, lifecycle.ErrAlreadyStopped):
		return history.RefusedAlreadyStopped, true
	}
	return "", false
}

// do issues in and records it. A write naming the domain through USE
// first is not recorded when the serving node does not know the domain
// (the statement never reached the catalog). It reports the outcome.
func (c *histClient) do(ctx context.Context, in history.Input) history.Outcome {
	ctx, cancel := context.WithTimeout(ctx, faultOpTimeout)
	defer cancel()
	var stmt string
	switch in.Kind {
	case history.Create:
		stmt = "CREATE DOMAIN " + in.Domain + ";"
	case history.Drop:
		stmt = "DROP DOMAIN " + in.Domain + ";"
	case history.Start:
		stmt = "START AT NOW;"
	case history.Stop:
		stmt = "STOP;"
	case history.Alter:
		stmt = "ALTER DOMAIN SET PLACEMENT " + in.Placement + ";"
	case history.Read:
		in.Level = c.level
		return c.read(ctx, in)
	case history.List:
		in.Level = c.level
		return c.list(ctx, in)
	case history.Txn:
		return c.txn(ctx, in)
	}
	if in.Kind == history.Start || in.Kind == history.Stop || in.Kind == history.Alter {
		if _, err := c.s.ExecText(ctx, "USE "+in.Domain+";"); err != nil {
			return 0
		}
	}
	done := c.rec.Invoke(c.id, in)
	if c.plantEarlyAck {
		done(history.Output{Outcome: history.OK})
		_, _ = c.s.ExecText(ctx, stmt)
		return history.OK
	}
	_, err := c.s.ExecText(ctx, stmt)
	out := history.Output{Outcome: history.OK}
	if err != nil {
		out.Outcome = history.Unknown
		if r, ok := refusal(err); ok {
			out = history.Output{Outcome: history.Failed, Refusal: r}
		}
	}
	done(out)
	return out.Outcome
}

// read runs DESCRIBE DOMAIN and records what it saw; a read that fails
// for another reason than an absent domain is recorded as unknown (the
// checker leaves it out).
func (c *histClient) read(ctx context.Context, in history.Input) history.Outcome {
	if c.plantLocalRead {
		in.Level = history.Linearizable
	}
	done := c.rec.Invoke(c.id, in)
	rs, err := c.s.ExecText(ctx, "DESCRIBE DOMAIN "+in.Domain+";")
	switch {
	case errors.Is(err, lifecycle.ErrDomainNotFound):
		done(history.Output{Outcome: history.OK})
		return history.OK
	case err != nil || len(rs) != 1 || rs[0].Set == nil || len(rs[0].Set.Rows) != 1:
		done(history.Output{Outcome: history.Unknown})
		return history.Unknown
	}
	set := rs[0].Set
	row := set.Rows[0]
	out := history.Output{Outcome: history.OK, Revision: row[set.Column("revision")].Uint(), Saw: history.Domain{
		Exists:    true,
		Running:   row[set.Column("status")].Text() == lifecycle.Running.String(),
		Gen:       row[set.Column("generation")].Uint(),
		Placement: row[set.Column("placement")].Text(),
	}}
	done(out)
	return out.Outcome
}

// list runs LIST DOMAINS LIKE the domain's name and records what it saw,
// as read does.
func (c *histClient) list(ctx context.Context, in history.Input) history.Outcome {
	if c.plantLocalRead {
		in.Level = history.Linearizable
	}
	done := c.rec.Invoke(c.id, in)
	rs, err := c.s.ExecText(ctx, "LIST DOMAINS LIKE '"+in.Domain+"';")
	if err != nil || len(rs) != 1 || rs[0].Set == nil || len(rs[0].Set.Rows) > 1 {
		done(history.Output{Outcome: history.Unknown})
		return history.Unknown
	}
	out := history.Output{Outcome: history.OK}
	if set := rs[0].Set; len(set.Rows) == 1 {
		row := set.Rows[0]
		out.Saw = history.Domain{Exists: true,
			Running: row[set.Column("status")].Text() == lifecycle.Running.String(),
			Gen:     row[set.Column("generation")].Uint()}
	}
	done(out)
	return out.Outcome
}

// faultPlacements are the placements ALTER sets.
var faultPlacements = []string{"NEUTRAL", "PREFER COLOCATION", "SUGGEST SEPARATION"}

// randomOp draws the next operation of a client on one of domains.
func randomOp(r *rand.Rand, domains []string) history.Input {
	d := domains[r.IntN(len(domains))]
	switch x := r.IntN(100); {
	case x < 28:
		return history.Input{Kind: history.Read, Domain: d}
	case x < 36:
		return history.Input{Kind: history.List, Domain: d}
	case x < 47:
		return history.Input{Kind: history.Create, Domain: d}
	case x < 58:
		return history.Input{Kind: history.Start, Domain: d}
	case x < 69:
		return history.Input{Kind: history.Stop, Domain: d}
	case x < 80:
		return history.Input{Kind: history.Alter, Domain: d, Placement: faultPlacements[r.IntN(len(faultPlacements))]}
	case x < 90:
		return history.Input{Kind: history.Txn, Domain: d, Steps: randomSteps(r)}
	default:
		return history.Input{Kind: history.Drop, Domain: d}
	}
}

// randomSteps draws one to three transaction steps.
func randomSteps(r *rand.Rand) []history.Step {
	steps := make([]history.Step, 1+r.IntN(3))
	for i := range steps {
		switch r.IntN(3) {
		case 0:
			steps[i] = history.Step{Kind: history.Start}
		case 1:
			steps[i] = history.Step{Kind: history.Stop}
		default:
			steps[i] = history.Step{Kind: history.Alter, Placement: faultPlacements[r.IntN(len(faultPlacements))]}
		}
	}
	return steps
}

// Fault kinds the nemesis draws.
const (
	faultIsolate       = "isolate"
	faultIsolateLeader = "isolate-leader"
	// faultCutFromLeader cuts the leader's traffic to a follower, one way;
	// faultCutToLeader the follower's traffic to the leader.
	faultCutFromLeader = "cut-from-leader"
	faultCutToLeader   = "cut-to-leader"
	faultDelay         = "delay"
	faultKill          = "kill"
	// faultPause stalls every link of a member, both ways and its
	// clients' too, without a reset, and pauses its time source's timers:
	// what a SIGSTOP does to it, but for raft's and the HTTP/2 stacks' own
	// timers, which do not run on the member's time source.
	faultPause = "pause"
	// faultClockForward and faultClockBack step a member's UTC by 2 to 8
	// s while its monotonic clock runs on; the heal steps it back.
	faultClockForward = "clock-forward"
	faultClockBack    = "clock-back"
)

// episode is one fault the nemesis held, on the recorder's clock.
type episode struct {
	kind               string
	from, healed, till int64 // the fault's start, its heal, and the end of the quiet after it
}

// faultRunOptions shapes one nemesis run.
type faultRunOptions struct {
	seed     uint64
	episodes int      // faults, one after the other
	kinds    []string // drawn from
	hold     [2]time.Duration
	quiet    time.Duration
	// remote runs the clients over the remote protocol (the Go client
	// to each member's session listener) instead of in process.
	remote bool
}

// faultRunResult is one run's row of the table.
type faultRunResult struct {
	seed    uint64
	report  history.Report
	clock   []string                 // clock-invariant violations in the frames the watchers saw
	longest map[string]time.Duration // per fault kind: the longest time no write completed OK
	resumed map[string]time.Duration // per fault kind: the longest wait for ticks on a member after a heal
	kinds   map[string]*kindCount    // per fault kind: episodes, operations and unknowns
}

// kindCount is what one run saw during the episodes of one fault kind:
// the operations invoked within them (fault and quiet) and those of them
// whose outcome is unknown.
type kindCount struct{ episodes, ops, unknowns int }

// runFaults runs one seeded nemesis run on a fresh three-member cluster:
// six clients (a linearizable and a local reader on each member) issue
// random operations on three domains, and a clock watcher on each member
// follows a paced domain's clock, while the nemesis holds opts.episodes
// faults drawn from opts.kinds, each healed (a killed member restarted on
// its data directory, a paused one resumed, a stepped clock stepped back)
// and followed by a quiet spell. After the last, every member reads every
// domain at the linearizable level: the acknowledged writes must all be
// there. The history and the watchers' frames are checked; a failing
// history is written next to its seed under dir.
func runFaults(t *testing.T, opts faultRunOptions, dir string) faultRunResult {
	t.Helper()
	h := testcluster.New(t, testcluster.Options{Faults: true, Durable: true, Clocks: true})
	h.StartThree()
	allLive(h)
	names := h.Names()
	r := rand.New(rand.NewPCG(opts.seed, 26))
	domains := []string{"h0", "h1", "h2"}
	rec := history.NewRecorder(timesource.System())

	// urls are the session listeners of the running incarnations,
	// served from the test's goroutine.
	var urls sync.Map // *cluster.Member → string
	serve := func(m *cluster.Member) {
		if opts.remote {
			urls.Store(m, h.ServeSessions(m))
		}
	}
	for _, m := range h.Live() {
		serve(m)
	}
	tlsConf := h.ClientTLS("history")
	dial := h.Net().Dialer(faultClients)
	urlOf := func(m *cluster.Member) (string, bool) {
		if !opts.remote {
			return "", true
		}
		u, ok := urls.Load(m)
		if !ok {
			return "", false
		}
		return u.(string), true
	}

	// The watched clock runs for the whole run, paced every 50 ms.
	setup, cancelSetup := context.WithTimeout(context.Background(), time.Minute)
	_, err := session.New(h.Leader().Node(), session.Options{}).ExecText(setup,
		"CREATE PACED DOMAIN "+faultClockDomain+" WITH PERIOD 50ms SKEW 0s; USE "+faultClockDomain+"; START AT NOW;")
	cancelSetup()
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() }) // a run that fails early stops its clients too
	var watchers clockWatchers
	for _, name := range names {
		watchers.watch(ctx, &wg, h, name, rec)
	}
	var nextID struct {
		sync.Mutex
		n int
	}
	newID := func() int {
		nextID.Lock()
		defer nextID.Unlock()
		nextID.n++
		return nextID.n - 1
	}
	for i := 0; i < 2*len(names); i++ {
		name := names[i%len(names)]
		level := history.Linearizable
		if i >= len(names) {
			level = history.Local
		}
		cr := rand.New(rand.NewPCG(opts.seed, uint64(i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c *histClient
			defer func() {
				if c != nil {
					c.close()
				}
			}()
			for ctx.Err() == nil {
				m := h.Member(name)
				url, served := urlOf(m)
				if m == nil || !served { // killed: wait for its restart
					time.Sleep(20 * time.Millisecond)
					continue
				}
				if c == nil || c.m != m { // a new incarnation is a new session
					if c != nil {
						c.close()
					}
					if c = newHistClient(t, newID(), m, url, tlsConf, dial, level, rec, false); c == nil {
						time.Sleep(20 * time.Millisecond)
						continue
					}
				}
				c.do(ctx, randomOp(cr, domains))
				time.Sleep(time.Duration(cr.IntN(10)) * time.Millisecond)
			}
		}()
	}

	var eps []episode
	for e := 0; e < opts.episodes; e++ {
		kind := opts.kinds[r.IntN(len(opts.kinds))]
		hold := opts.hold[0] + time.Duration(r.Int64N(int64(opts.hold[1]-opts.hold[0])+1))
		victim := names[r.IntN(len(names))]
		step := 2*time.Second + time.Duration(r.Int64N(int64(6*time.Second)+1))
		from := rec.Now()
		switch kind {
		case faultIsolate:
			h.Net().Isolate(victim, names...)
		case faultIsolateLeader:
			victim = leaderName(h)
			h.Net().Isolate(victim, names...)
		case faultCutFromLeader, faultCutToLeader:
			leader := leaderName(h)
			if victim == leader {
				victim = h.Follower(h.Leader()).Node().Name()
			}
			if kind == faultCutFromLeader {
				h.Net().Cut(leader, victim)
			} else {
				h.Net().Cut(victim, leader)
			}
		case faultDelay:
			for _, o := range names {
				if o != victim {
					h.Net().Delay(victim, o, 50*time.Millisecond, 50*time.Millisecond)
					h.Net().Delay(o, victim, 50*time.Millisecond, 50*time.Millisecond)
				}
			}
		case faultKill:
			h.Kill(victim)
		case faultPause:
			h.Clock(victim).Pause()
			h.Net().Isolate(victim, append(slices.Clone(names), faultClients)...)
		case faultClockForward:
			h.Clock(victim).Step(step)
		case faultClockBack:
			h.Clock(victim).Step(-step)
		}
		time.Sleep(hold) // the fault is held for a drawn time: the schedule, not a wait for a condition
		switch kind {
		case faultPause:
			h.Clock(victim).Resume()
		case faultClockForward, faultClockBack:
			h.Clock(victim).Step(-h.Clock(victim).Offset())
		}
		h.Net().Heal()
		healed := rec.Now()
		if kind == faultKill {
			var join string
			for _, m := range h.Live() {
				join = m.APIAddr()
			}
			serve(h.Start(victim, false, join))
		}
		time.Sleep(opts.quiet)
		eps = append(eps, episode{kind: kind, from: from, healed: healed, till: rec.Now()})
	}
	cancel()
	wg.Wait()
	end := rec.Now()

	// Every acknowledged write is present at the end: each member reads
	// each domain at the linearizable level once the cluster is whole.
	allLive(h)
	for _, m := range h.Live() {
		url, _ := urlOf(m)
		c := newHistClient(t, newID(), m, url, tlsConf, dial, history.Linearizable, rec, false)
		require.NotNil(t, c, "a client of %s for the final reads", m.Node().Name())
		for _, d := range domains {
			h.Eventually(30*time.Second, "a confirmed final read of "+d+" on "+m.Node().Name(), func() bool {
				return c.do(context.Background(), history.Input{Kind: history.Read, Domain: d}) == history.OK
			})
		}
		c.close()
	}

	ops := rec.Ops()
	rep, err := history.Check(ops, faultChecker, dir, fmt.Sprintf("seed-%d", opts.seed))
	require.NoError(t, err)
	logs := watchers.all()
	txns := map[history.Outcome]int{}
	for _, op := range ops {
		if op.Input.Kind == history.Txn {
			txns[op.Output.Outcome]++
		}
	}
	ticks := 0
	for _, l := range logs {
		fr, _ := l.frames()
		for _, f := range fr {
			if f.Kind == wire.FrameTick {
				ticks++
			}
		}
	}
	t.Logf("seed %d: transactions %d ok, %d refused, %d unknown; %d ticks through %d attachments", opts.seed,
		txns[history.OK], txns[history.Failed], txns[history.Unknown], ticks, len(logs))
	res := faultRunResult{seed: opts.seed, report: rep, clock: history.CheckClock(attachments(logs)), longest: unavailability(ops, eps),
		resumed: tickResumption(logs, eps, end), kinds: countKinds(ops, eps)}
	if rep.Visualization != "" || len(res.clock) > 0 {
		seedFile := filepath.Join(dir, fmt.Sprintf("seed-%d.txt", opts.seed))
		lines := append(append([]string{fmt.Sprintf("seed %d", opts.seed)}, rep.Local...), res.clock...)
		require.NoError(t, os.WriteFile(seedFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		t.Logf("seed %d: history %q, clock violations %q written to %s", opts.seed, rep.Visualization, res.clock, seedFile)
	}
	return res
}

// countKinds counts, per fault kind, its episodes and the operations
// invoked within them.
func countKinds(ops []history.Op, eps []episode) map[string]*kindCount {
	out := make(map[string]*kindCount)
	for _, e := range eps {
		k := out[e.kind]
		if k == nil {
			k = &kindCount{}
			out[e.kind] = k
		}
		k.episodes++
		for _, op := range ops {
			if op.Call >= e.from && op.Call <= e.till {
				k.ops++
				if op.Output.Outcome == history.Unknown {
					k.unknowns++
				}
			}
		}
	}
	return out
}

// leaderName returns the name of the confirmed leader.
func leaderName(h *testcluster.Cluster) string { return h.Leader().Node().Name() }

// unavailability returns, per fault kind, the longest time during one of
// its episodes (the fault and the quiet after it) in which no write
// completed OK, counted from the fault's start.
func unavailability(ops []history.Op, eps []episode) map[string]time.Duration {
	var acks []int64
	for _, op := range ops {
		if op.Input.Kind != history.Read && op.Input.Kind != history.List && op.Output.Outcome == history.OK {
			acks = append(acks, op.Return)
		}
	}
	slices.Sort(acks)
	out := make(map[string]time.Duration)
	for _, e := range eps {
		last, longest := e.from, int64(0)
		for _, a := range acks {
			if a < e.from || a > e.till {
				continue
			}
			longest = max(longest, a-last)
			last = a
		}
		longest = max(longest, e.till-last)
		out[e.kind] = max(out[e.kind], time.Duration(longest))
	}
	return out
}

// faultTable formats the results of a run set: a row per run and a row of
// totals (operations, anomalies of the history, clock-invariant
// violations, unknown outcomes, undecided checks), then a row per fault
// kind: its episodes, the operations invoked during them (fault and
// quiet) and the unknowns among them, the runs holding it that had an
// anomaly or a clock violation, the longest time in one of its episodes
// no write was acknowledged, and the longest a member's watcher waited
// for a tick after one of its heals.
func faultTable(results []faultRunResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %6s %9s %6s %8s %9s\n", "seed", "ops", "anomalies", "clock", "unknowns", "undecided")
	var ops, anomalies, clockv, unknowns, undecided int
	type kindRow struct {
		kindCount
		failing          int
		longest, resumed time.Duration
	}
	kinds := map[string]*kindRow{}
	for _, r := range results {
		u := 0
		if r.report.Undecided {
			u = 1
		}
		ops, anomalies, clockv, unknowns, undecided = ops+r.report.Ops, anomalies+r.report.Anomalies(), clockv+len(r.clock), unknowns+r.report.Unknowns, undecided+u
		fmt.Fprintf(&b, "%-8d %6d %9d %6d %8d %9d\n", r.seed, r.report.Ops, r.report.Anomalies(), len(r.clock), r.report.Unknowns, u)
		for k, c := range r.kinds {
			row := kinds[k]
			if row == nil {
				row = &kindRow{}
				kinds[k] = row
			}
			row.episodes, row.ops, row.unknowns = row.episodes+c.episodes, row.ops+c.ops, row.unknowns+c.unknowns
			if r.report.Anomalies() > 0 || len(r.clock) > 0 || r.report.Undecided {
				row.failing++
			}
			row.longest, row.resumed = max(row.longest, r.longest[k]), max(row.resumed, r.resumed[k])
		}
	}
	fmt.Fprintf(&b, "%-8s %6d %9d %6d %8d %9d\n\n", fmt.Sprintf("all %d", len(results)), ops, anomalies, clockv, unknowns, undecided)
	ks := make([]string, 0, len(kinds))
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	fmt.Fprintf(&b, "%-16s %8s %6s %8s %8s %14s %14s\n", "fault", "episodes", "ops", "unknowns", "failing", "no write for", "ticks resumed")
	for _, k := range ks {
		row := kinds[k]
		fmt.Fprintf(&b, "%-16s %8d %6d %8d %8d %14s %14s\n", k, row.episodes, row.ops, row.unknowns, row.failing,
			row.longest.Round(time.Millisecond), row.resumed.Round(time.Millisecond))
	}
	return b.String()
}

// The short deterministic subset of make faults: one seed, one isolation
// of a member and its heal, the history checked. It asserts no anomaly and
// no undecided check, never a duration.
func TestFaultsShort(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-member cluster under a nemesis")
	}
	res := runFaults(t, faultRunOptions{seed: 1, episodes: 1, kinds: []string{faultIsolate},
		hold: [2]time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond}, quiet: time.Second, remote: true}, t.TempDir())
	t.Logf("\n%s", faultTable([]faultRunResult{res}))
	require.False(t, res.report.Undecided, "the checker could not decide the history")
	require.Zero(t, res.report.Anomalies(), "local-level violations: %q", res.report.Local)
	require.Empty(t, res.clock, "clock-invariant violations in the frames the watchers saw")
	require.GreaterOrEqual(t, res.report.Ops, 9, "the final reads of every domain through every member")
}

// The checker catches the planted bugs, each after a domain was created
// and one member cut off from the other two: a read recorded as
// linearizable that answers from the cut member's local state; a write,
// and a transaction, acknowledged through the cut member the moment they
// are sent; and a transaction through the leader of which only the first
// step is committed. Each history fails and is written as a
// visualisation.
func TestFaultsCheckerCatchesPlantedBugs(t *testing.T) {
	readAfter := func(ctx context.Context, c *histClient) {
		require.Equal(t, history.OK, c.do(ctx, history.Input{Kind: history.Read, Domain: "p"}))
	}
	briefly := func(ctx context.Context, c *histClient, in history.Input) {
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		c.do(short, in)
	}
	cases := []struct {
		name string
		// cut runs on the planted client (on the cut member, or on the
		// leader with onLeader) after the majority's writes.
		cut func(ctx context.Context, c *histClient)
		// after runs on the majority once cut has run.
		after                                       func(ctx context.Context, c *histClient)
		plantLocalRead, plantEarlyAck, plantHalfTxn bool
		onLeader                                    bool
	}{
		{name: "linearizable read from local state", cut: func(ctx context.Context, c *histClient) {
			require.Equal(t, history.OK, c.do(ctx, history.Input{Kind: history.Read, Domain: "p"}))
		}, after: func(context.Context, *histClient) {}, plantLocalRead: true},
		{name: "write acknowledged before it commits", cut: func(ctx context.Context, c *histClient) {
			briefly(ctx, c, history.Input{Kind: history.Stop, Domain: "p"})
		}, after: readAfter, plantEarlyAck: true},
		{name: "transaction acknowledged before it commits", cut: func(ctx context.Context, c *histClient) {
			briefly(ctx, c, history.Input{Kind: history.Txn, Domain: "p", Steps: []history.Step{{Kind: history.Alter, Placement: "PREFER COLOCATION"}}})
		}, after: readAfter, plantEarlyAck: true},
		{name: "transaction half applied", cut: func(ctx context.Context, c *histClient) {
			require.Equal(t, history.OK, c.do(ctx, history.Input{Kind: history.Txn, Domain: "p",
				Steps: []history.Step{{Kind: history.Stop}, {Kind: history.Alter, Placement: "PREFER COLOCATION"}}}))
		}, after: readAfter, plantHalfTxn: true, onLeader: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := testcluster.New(t, testcluster.Options{Faults: true})
			h.StartThree()
			allLive(h)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			leader := h.Leader()
			victim := h.Follower(leader)
			rec := history.NewRecorder(timesource.System())
			majority := newHistClient(t, 0, leader, "", nil, nil, history.Linearizable, rec, false)
			defer majority.close()
			on := victim
			if tc.onLeader {
				on = leader
			}
			planted := newHistClient(t, 1, on, "", nil, nil, history.Linearizable, rec, tc.plantLocalRead)
			planted.plantEarlyAck, planted.plantHalfTxn = tc.plantEarlyAck, tc.plantHalfTxn
			defer planted.close()

			require.Equal(t, history.OK, majority.do(ctx, history.Input{Kind: history.Create, Domain: "p"}))
			h.Eventually(30*time.Second, "the domain installed on the member to cut", func() bool {
				_, err := victim.Node().Domain("p")
				return err == nil
			})
			h.Net().Isolate(victim.Node().Name(), h.Names()...)
			require.Equal(t, history.OK, majority.do(ctx, history.Input{Kind: history.Start, Domain: "p"}))
			tc.cut(ctx, planted)
			tc.after(ctx, majority)
			h.Net().Heal()

			dir := t.TempDir()
			rep, err := history.Check(rec.Ops(), faultChecker, dir, "planted")
			require.NoError(t, err)
			require.False(t, rep.Undecided)
			require.False(t, rep.Linearizable, "the planted bug went unnoticed: %+v", rec.Ops())
			b, err := os.ReadFile(rep.Visualization)
			require.NoError(t, err)
			require.Contains(t, string(b), "<html")
			t.Logf("visualisation: %s", rep.Visualization)
		})
	}
}
