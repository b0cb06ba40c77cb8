package session

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/wire"
)

// heldInstallations is a node whose first installation since it started is
// held back, as on a node still starting after a restart: its counter reads
// zero until release, then the node's own.
type heldInstallations struct {
	n        *node.Node
	waiting  chan struct{} // closed when an attach first waits
	released chan struct{}
	once     sync.Once
}

func holdInstallations(e *env) *heldInstallations {
	h := &heldInstallations{n: e.node, waiting: make(chan struct{}), released: make(chan struct{})}
	e.sess.installs = h
	return h
}

func (h *heldInstallations) Installed() (count, revision uint64, changed <-chan struct{}) {
	select {
	case <-h.released:
		return h.n.Installed()
	default:
		return 0, 0, h.released
	}
}

func (h *heldInstallations) WaitInstalled(ctx context.Context) error {
	h.once.Do(func() { close(h.waiting) })
	select {
	case <-h.released:
		return h.n.WaitInstalled(ctx)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *heldInstallations) release() { close(h.released) }

// awaitWaiting waits until an attach waits on the held installation.
func (h *heldInstallations) awaitWaiting(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-h.waiting:
	case <-ctx.Done():
		t.Fatal("attach never waited for the node's first installation")
	}
}

type execResult struct {
	rs  []wire.Result
	err error
}

func execAsync(ctx context.Context, s *Session, text string) <-chan execResult {
	out := make(chan execResult, 1)
	go func() {
		rs, err := s.ExecText(ctx, text)
		out <- execResult{rs, err}
	}()
	return out
}

// An attach first waits until the node has installed the committed domains
// since it started; the installation then holds the domain, which the
// attach follows.
func TestAttachWaitsForFirstInstallation(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;")
	h := holdInstallations(e)
	res := execAsync(e.ctx, e.sess, "ATTACH DOMAIN CLOCK;")
	select {
	case <-h.waiting:
	case r := <-res:
		t.Fatalf("attach returned before the node's first installation: %v, %v", r.rs, r.err)
	case <-e.ctx.Done():
		t.Fatal("attach never waited for the node's first installation")
	}
	select {
	case r := <-res:
		t.Fatalf("attach returned while the installation is held back: %v, %v", r.rs, r.err)
	default:
	}
	require.Empty(t, e.sess.Attached())
	h.release()
	r := <-res
	require.NoError(t, r.err)
	require.NotNil(t, r.rs[0].Clock)
	require.Equal(t, uint64(1), r.rs[0].Clock.Generation)
	require.Equal(t, []string{"prod"}, e.sess.Attached())
}

// A cancelled attach request does not end the wait: the attach keeps its
// place on the request lane, later requests run after the installation,
// and nothing is attached.
func TestCancelledAttachKeepsWaiting(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE DOMAIN prod; USE prod;")
	h := holdInstallations(e)
	ctx, cancel := context.WithCancel(e.ctx)
	res := execAsync(ctx, e.sess, "ATTACH DOMAIN CLOCK;")
	h.awaitWaiting(t, e.ctx)
	cancel()
	r := <-res
	require.ErrorIs(t, r.err, context.Canceled)
	require.Empty(t, e.sess.turn, "the waiting attach still holds the request lane")
	later := execAsync(e.ctx, e.sess, "LIST DOMAINS;")
	h.release()
	lr := <-later
	require.NoError(t, lr.err)
	require.Empty(t, e.sess.Attached(), "a cancelled attach attaches nothing")
	require.Zero(t, e.sess.Pending())
	e.exec("ATTACH DOMAIN CLOCK;")
}

// Only the end of the session ends the wait short of the installation,
// including a wait whose request was cancelled.
func TestCloseEndsAttachWait(t *testing.T) {
	for _, cancelFirst := range []bool{false, true} {
		e := newEnv(t, Options{})
		e.exec("CREATE DOMAIN prod; USE prod;")
		h := holdInstallations(e)
		ctx, cancel := context.WithCancel(e.ctx)
		res := execAsync(ctx, e.sess, "ATTACH DOMAIN CLOCK;")
		h.awaitWaiting(t, e.ctx)
		if cancelFirst {
			cancel()
			require.ErrorIs(t, (<-res).err, context.Canceled)
		}
		// Close ends the wait, the handed-off one too, and waits for it.
		closed := make(chan error, 1)
		go func() { closed <- e.sess.Close() }()
		select {
		case err := <-closed:
			require.NoError(t, err)
		case <-e.ctx.Done():
			h.release()
			<-closed
			t.Fatal("closing the session did not end the attach's wait for the installation")
		}
		if !cancelFirst {
			require.ErrorIs(t, (<-res).err, ErrClosed)
		}
		require.Empty(t, e.sess.Attached())
		cancel()
	}
}
