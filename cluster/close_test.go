package cluster_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/internal/testcluster"
)

// TestCloseTwice checks that Close is safe to repeat and releases what
// Start took: the API listener refuses connections afterwards (goleak, in
// TestMain, checks that no goroutine outlives the member).
func TestCloseTwice(t *testing.T) {
	h := testcluster.New(t, testcluster.Options{})
	m := h.Start("n1", true)
	addr := m.APIAddr()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	require.NoError(t, err, "the API listener serves %q while the member runs", addr)
	require.NoError(t, c.Close())
	h.Kill("n1")
	require.NoError(t, m.Close())
	_, err = net.DialTimeout("tcp", addr, time.Second)
	require.Error(t, err, "the API listener is closed")
}
