package follow

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fake UTC every test starts at: 2026-01-01T00:00:00Z.
const t0 = int64(1767225600) * int64(time.Second)
