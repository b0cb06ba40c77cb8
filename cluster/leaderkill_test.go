package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/session"
)

// domainModel is what the successful statements on one domain made of it.
type domainModel struct {
	exists     bool
	generation uint64
	running    bool
	// uncertain is the statement that failed at its deadline, whose
	// outcome the final catalog decides; the session stops using the
	// domain after it.
	uncertain string
}

// apply records one successful statement.
func (m *domainModel) apply(stmt string) {
	switch stmt {
	case "create":
		m.exists = true
	case "start":
		m.generation++
		m.running = true
	case "stop":
		m.running = false
	}
}

// TestStatementsSurviveLeaderKill runs 1,000 CREATE, START and STOP
// statements from sessions on both followers, several at a time, and kills
// the leader when half of them have answered. Every statement either
// succeeds, exactly once (a second application would be refused: a domain
// created twice exists already, started twice is running already), or
// fails with its deadline; the catalog the survivors agree on is the model
// of the statements that succeeded.
func TestStatementsSurviveLeaderKill(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{})
	h.StartThree()
	leader := h.Leader()
	followers := h.FollowersOf(leader)

	const (
		sessions  = 8
		perDomain = 5 // create, start, stop, start, stop
		total     = 1000
		domains   = total / perDomain / sessions // per session
	)
	plan := []string{"create", "start", "stop", "start", "stop"}
	models := make([][]domainModel, sessions)
	var answered, skipped atomic.Int64
	killAt := int64(total / 2)
	killed := make(chan struct{})
	var killOnce sync.Once

	var wg sync.WaitGroup
	errs := make(chan error, total)
	for s := range sessions {
		models[s] = make([]domainModel, domains)
		sess := session.New(followers[s%len(followers)].Node(), session.Options{Logger: h.Logger()})
		t.Cleanup(func() { _ = sess.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range domains {
				for step := range perDomain {
					m := &models[s][d]
					if m.uncertain != "" {
						// The domain's state is unknown after a statement
						// failed at its deadline: its later steps are not run.
						skipped.Add(1)
						continue
					}
					name := fmt.Sprintf("s%d_d%d", s, d)
					text := statement(plan[step], name, s)
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					_, err := sess.ExecText(ctx, text)
					cancel()
					if answered.Add(1) == killAt {
						killOnce.Do(func() { close(killed) })
					}
					switch {
					case err == nil:
						m.apply(plan[step])
					case errors.Is(err, context.DeadlineExceeded):
						m.uncertain = plan[step]
					default:
						errs <- fmt.Errorf("%s on %s: %w", plan[step], name, err)
						m.uncertain = plan[step]
					}
				}
			}
		}()
	}
	<-killed
	killedName := leader.Node().Name()
	h.Kill(killedName)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.EqualValues(t, total, answered.Load()+skipped.Load(), "every statement answered, or was skipped after its domain's failed at its deadline")
	newLeader := h.Leader()
	require.NotEqual(t, killedName, newLeader.Node().Name())

	// The survivors agree on the catalog, which is the model.
	var final []lifecycle.Domain
	h.Eventually(10*time.Second, "the survivors on one revision", func() bool {
		a, b := followers[0].Node(), followers[1].Node()
		final = a.CatalogState().Domains()
		return a.CatalogRevision() == b.CatalogRevision() && a.CatalogRevision() == newLeader.Node().CatalogRevision()
	})
	require.Equal(t, final, followers[1].Node().CatalogState().Domains())
	byName := make(map[string]lifecycle.Domain, len(final))
	for _, d := range final {
		byName[d.Name] = d
	}
	uncertain := 0
	for s := range sessions {
		for d := range domains {
			name := fmt.Sprintf("s%d_d%d", s, d)
			m := models[s][d]
			got, ok := byName[name]
			delete(byName, name)
			want := m
			if m.uncertain != "" {
				uncertain++
				// Either the statement committed or it did not.
				applied := m
				applied.apply(m.uncertain)
				if ok == applied.exists && got.Generation == applied.generation && got.Running() == applied.running {
					continue
				}
			}
			require.Equal(t, want.exists, ok, "%s exists", name)
			require.Equal(t, want.generation, got.Generation, "%s generation", name)
			require.Equal(t, want.running, got.Running(), "%s running", name)
		}
	}
	require.Empty(t, byName, "domains no statement created")
	t.Logf("killed leader %s after %d answers; %s leads now; %d statements failed at their deadline, %d skipped after them", killedName, killAt, newLeader.Node().Name(), uncertain, skipped.Load())
}

// statement is the text of one write on domain name: even sessions use
// unpaced domains, odd ones paced domains (whose START picks an
// authority).
func statement(op, name string, s int) string {
	switch op {
	case "create":
		if s%2 == 1 {
			return fmt.Sprintf("CREATE PACED DOMAIN %s WITH PERIOD 1s SKEW 1s;", name)
		}
		return fmt.Sprintf("CREATE DOMAIN %s;", name)
	case "start":
		return fmt.Sprintf("USE %s; START AT NOW TIME RATE 1;", name)
	default:
		return fmt.Sprintf("USE %s; STOP;", name)
	}
}
