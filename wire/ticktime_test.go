package wire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTickTimes(t *testing.T) {
	boundary := time.Date(2026, 1, 1, 0, 1, 30, 5, time.UTC)
	utc := time.Date(2026, 1, 1, 0, 0, 1, 500, time.UTC)
	tk := Tick{Generation: 1, ID: 91, Boundary: boundary.UnixNano(), AuthorityUTC: utc.UnixNano()}
	require.Equal(t, boundary, tk.BoundaryTime())
	require.Equal(t, utc, tk.AuthorityTime())
	require.Equal(t, time.UTC, tk.BoundaryTime().Location())
}
