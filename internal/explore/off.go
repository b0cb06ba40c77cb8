//go:build !nspl_explore

package explore

// Enabled reports whether this build perturbs schedules.
const Enabled = false

// Seed does nothing in this build.
func Seed(uint64) {}

// Yield does nothing in this build.
func Yield() {}

// Plant does nothing in this build.
func Plant(string, bool) {}

// Planted is false in this build.
func Planted(string) bool { return false }
