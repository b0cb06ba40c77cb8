package catalog

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A fixed incarnation is for one in-memory embedded node, whose runs must
// repeat; without one every open takes a fresh random one, and a durable
// catalog refuses a fixed one, since a restarted process must never act as
// the one before it.
func TestIncarnation(t *testing.T) {
	t.Run("fixed in memory", func(t *testing.T) {
		n := openNode(t, Config{Incarnation: 7})
		require.Equal(t, uint64(7), n.Identity().Incarnation)
	})
	t.Run("random otherwise", func(t *testing.T) {
		a, b := openNode(t, Config{}), openNode(t, Config{})
		require.NotZero(t, a.Identity().Incarnation)
		require.NotEqual(t, a.Identity().Incarnation, b.Identity().Incarnation)
	})
	t.Run("refused with a data directory", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := Open(ctx, Config{NodeName: "local", DataDir: t.TempDir(), Incarnation: 7, Logger: quietLogger(t)})
		require.ErrorIs(t, err, ErrConfig)
	})
}
