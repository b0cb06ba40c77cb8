package clockrt

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInterruptionWakesEveryObserver(t *testing.T) {
	r, _ := newAheadRegistry(t)
	install(t, r, "a", paced(1, 1, 1))
	install(t, r, "b", paced(1, 1, 2))
	oa, err := r.Observe("a")
	require.NoError(t, err)
	ob, err := r.Observe("b")
	require.NoError(t, err)
	require.Nil(t, oa.Read().Interrupted)
	require.Nil(t, ob.Read().Interrupted)
	require.Nil(t, r.Interrupted())

	in := &Interruption{Cause: "lost the leader"}
	r.SetInterrupted(in)
	require.True(t, woken(oa))
	require.True(t, woken(ob))
	require.Same(t, in, oa.Read().Interrupted)
	require.Same(t, in, ob.Read().Interrupted)
	require.Same(t, in, r.Interrupted())

	// Interrupting again changes nothing and wakes nobody.
	r.SetInterrupted(&Interruption{Cause: "still lost"})
	require.False(t, woken(oa))

	// A domain installed meanwhile is interrupted too.
	install(t, r, "c", paced(1, 1, 3))
	oc, err := r.Observe("c")
	require.NoError(t, err)
	require.NotNil(t, oc.Read().Interrupted)

	r.SetInterrupted(nil)
	require.True(t, woken(oa))
	require.True(t, woken(oc))
	require.Nil(t, oa.Read().Interrupted)
	require.Nil(t, oc.Read().Interrupted)
	r.SetInterrupted(nil)
	require.False(t, woken(oa))
}
