package cluster_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
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
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/history"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/runtime/timesource"
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
}

// statementRunner is a session as a client holds it: a member's session
// in process, or the Go client over the remote protocol.
type statementRunner interface {
	ExecText(ctx context.Context, text string) ([]wire.Result, error)
	Close() error
}

// newHistClient opens a session on m whose reads are at level: over the
// remote protocol to url when it is not empty, else in process.
func newHistClient(t *testing.T, id int, m *cluster.Member, url string, tlsConf *tls.Config, level history.Level, rec *history.Recorder, plantLocalRead bool) *histClient {
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
	cl, err := client.Dial(ctx, client.Config{URLs: []string{url}, TLS: tlsConf, ReadConsistency: rc})
	if err != nil {
		t.Logf("client %d: dial %s: %v", id, url, err)
		return nil
	}
	c.s = cl
	return c
}

func (c *histClient) close() { _ = c.s.Close() }

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
	case x < 30:
		return history.Input{Kind: history.Read, Domain: d}
	case x < 40:
		return history.Input{Kind: history.List, Domain: d}
	case x < 52:
		return history.Input{Kind: history.Create, Domain: d}
	case x < 64:
		return history.Input{Kind: history.Start, Domain: d}
	case x < 76:
		return history.Input{Kind: history.Stop, Domain: d}
	case x < 88:
		return history.Input{Kind: history.Alter, Domain: d, Placement: faultPlacements[r.IntN(len(faultPlacements))]}
	default:
		return history.Input{Kind: history.Drop, Domain: d}
	}
}

// Fault kinds the nemesis draws.
const (
	faultIsolate       = "isolate"
	faultIsolateLeader = "isolate-leader"
	faultOneWay        = "one-way"
	faultDelay         = "delay"
	faultKill          = "kill"
)

// episode is one fault the nemesis held, on the recorder's clock.
type episode struct {
	kind       string
	from, till int64 // the fault's start, and the end of the quiet after its heal
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
	longest map[string]time.Duration // per fault kind: the longest time no write completed OK
}

// runFaults runs one seeded nemesis run on a fresh three-member cluster:
// six clients (a linearizable and a local reader on each member) issue
// random operations on three domains while the nemesis holds
// opts.episodes faults drawn from opts.kinds, each healed (a killed
// member restarted on its data directory) and followed by a quiet spell.
// After the last, every member reads every domain at the linearizable
// level: the acknowledged writes must all be there. The history is
// checked; a failing one is written next to its seed under dir.
func runFaults(t *testing.T, opts faultRunOptions, dir string) faultRunResult {
	t.Helper()
	h := testcluster.New(t, testcluster.Options{Faults: true, Durable: true})
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

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() }) // a run that fails early stops its clients too
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
					if c = newHistClient(t, newID(), m, url, tlsConf, level, rec, false); c == nil {
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
		from := rec.Now()
		switch kind {
		case faultIsolate:
			h.Net().Isolate(victim, names...)
		case faultIsolateLeader:
			victim = leaderName(h)
			h.Net().Isolate(victim, names...)
		case faultOneWay:
			h.Net().Cut(leaderName(h), victim)
		case faultDelay:
			for _, o := range names {
				if o != victim {
					h.Net().Delay(victim, o, 50*time.Millisecond, 50*time.Millisecond)
					h.Net().Delay(o, victim, 50*time.Millisecond, 50*time.Millisecond)
				}
			}
		case faultKill:
			h.Kill(victim)
		}
		time.Sleep(hold) // the fault is held for a drawn time: the schedule, not a wait for a condition
		h.Net().Heal()
		if kind == faultKill {
			var join string
			for _, m := range h.Live() {
				join = m.APIAddr()
			}
			serve(h.Start(victim, false, join))
		}
		time.Sleep(opts.quiet)
		eps = append(eps, episode{kind: kind, from: from, till: rec.Now()})
	}
	cancel()
	wg.Wait()

	// Every acknowledged write is present at the end: each member reads
	// each domain at the linearizable level once the cluster is whole.
	allLive(h)
	for _, m := range h.Live() {
		url, _ := urlOf(m)
		c := newHistClient(t, newID(), m, url, tlsConf, history.Linearizable, rec, false)
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
	if rep.Visualization != "" {
		seedFile := filepath.Join(dir, fmt.Sprintf("seed-%d.txt", opts.seed))
		require.NoError(t, os.WriteFile(seedFile, []byte(fmt.Sprintf("seed %d\n%s\n", opts.seed, strings.Join(rep.Local, "\n"))), 0o644))
		t.Logf("seed %d: history written to %s", opts.seed, rep.Visualization)
	}
	return faultRunResult{seed: opts.seed, report: rep, longest: unavailability(ops, eps)}
}

// leaderName returns the name of the confirmed leader.
func leaderName(h *testcluster.Cluster) string { return h.Leader().Node().Name() }

// unavailability returns, per fault kind, the longest time during one of
// its episodes (the fault and the quiet after it) in which no write
// completed OK, counted from the fault's start.
func unavailability(ops []history.Op, eps []episode) map[string]time.Duration {
	var acks []int64
	for _, op := range ops {
		if op.Input.Kind != history.Read && op.Output.Outcome == history.OK {
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
// totals, with the longest unavailability per fault kind.
func faultTable(results []faultRunResult) string {
	kinds := map[string]bool{}
	for _, r := range results {
		for k := range r.longest {
			kinds[k] = true
		}
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %6s %9s %8s %9s", "seed", "ops", "anomalies", "unknowns", "undecided")
	for _, k := range ks {
		fmt.Fprintf(&b, " %14s", k)
	}
	b.WriteString("\n")
	var ops, anomalies, unknowns, undecided int
	worst := map[string]time.Duration{}
	for _, r := range results {
		u := 0
		if r.report.Undecided {
			u = 1
		}
		ops, anomalies, unknowns, undecided = ops+r.report.Ops, anomalies+r.report.Anomalies(), unknowns+r.report.Unknowns, undecided+u
		fmt.Fprintf(&b, "%-8d %6d %9d %8d %9d", r.seed, r.report.Ops, r.report.Anomalies(), r.report.Unknowns, u)
		for _, k := range ks {
			cell := "-"
			if d, ok := r.longest[k]; ok {
				cell = d.Round(time.Millisecond).String()
				worst[k] = max(worst[k], d)
			}
			fmt.Fprintf(&b, " %14s", cell)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%-8s %6d %9d %8d %9d", fmt.Sprintf("all %d", len(results)), ops, anomalies, unknowns, undecided)
	for _, k := range ks {
		fmt.Fprintf(&b, " %14s", worst[k].Round(time.Millisecond).String())
	}
	b.WriteString("\n")
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
	require.GreaterOrEqual(t, res.report.Ops, 9, "the final reads of every domain through every member")
}

// The checker catches the two planted bugs, each on a member cut off from
// the other two after a domain it holds was created: a read recorded as
// linearizable that answers from the member's local state, and a write
// acknowledged the moment it is sent. Each history fails and is written as
// a visualisation.
func TestFaultsCheckerCatchesPlantedBugs(t *testing.T) {
	cases := []struct {
		name string
		// cut runs on the isolated member after the majority's writes.
		cut func(ctx context.Context, c *histClient)
		// after runs on the majority once cut has run.
		after                         func(ctx context.Context, c *histClient)
		plantLocalRead, plantEarlyAck bool
	}{
		{"linearizable read from local state", func(ctx context.Context, c *histClient) {
			require.Equal(t, history.OK, c.do(ctx, history.Input{Kind: history.Read, Domain: "p"}))
		}, func(context.Context, *histClient) {}, true, false},
		{"write acknowledged before it commits", func(ctx context.Context, c *histClient) {
			short, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			c.do(short, history.Input{Kind: history.Stop, Domain: "p"})
		}, func(ctx context.Context, c *histClient) {
			require.Equal(t, history.OK, c.do(ctx, history.Input{Kind: history.Read, Domain: "p"}))
		}, false, true},
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
			majority := newHistClient(t, 0, leader, "", nil, history.Linearizable, rec, false)
			defer majority.close()
			planted := newHistClient(t, 1, victim, "", nil, history.Linearizable, rec, tc.plantLocalRead)
			planted.plantEarlyAck = tc.plantEarlyAck
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
