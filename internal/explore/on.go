//go:build nspl_explore

package explore

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Enabled reports whether this build perturbs schedules.
const Enabled = true

var (
	seed  atomic.Uint64
	draws atomic.Uint64

	mu     sync.Mutex
	plants = map[string]bool{}
)

// Seed restarts the sequence of Yield's draws from s.
func Seed(s uint64) {
	seed.Store(s)
	draws.Store(0)
}

// Yield may yield the processor, once or a few times, as the seed's
// sequence says: about a third of the calls run on, a third yield once and
// a third yield two to nine times.
func Yield() {
	r := splitmix64(seed.Load() ^ splitmix64(draws.Add(1)))
	switch r % 3 {
	case 0:
	case 1:
		runtime.Gosched()
	default:
		for range 2 + (r>>8)%8 {
			runtime.Gosched()
		}
	}
}

// Plant switches the planted bug name on (on true) or off.
func Plant(name string, on bool) {
	mu.Lock()
	plants[name] = on
	mu.Unlock()
}

// Planted reports whether the planted bug name is on.
func Planted(name string) bool {
	mu.Lock()
	defer mu.Unlock()
	return plants[name]
}

// splitmix64 is the step of the SplitMix64 generator: a well-mixed value of
// its input, so consecutive counters give independent draws.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
