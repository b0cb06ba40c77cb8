// Package explore perturbs the schedule of the goroutines at the session's
// lane, fan-out and attachment boundaries (and the observer's read), so a
// test explores orders a machine seldom runs, each one named by a seed.
//
// In a build with the nspl_explore tag, Yield draws from a sequence fixed by
// the seed (Seed) whether to yield the processor here, and how many times;
// Plant switches on a planted bug by name, which a test uses to show the
// exploration finds it. In every other build Yield does nothing and Planted
// is false, so the calls cost nothing in the product. The Go scheduler is not
// replayed: a seed fixes the yields, not every interleaving, so a failure is
// replayed by running its seed again, with GOMAXPROCS as the failure names it,
// as many times as it takes.
package explore

// Planted bugs, by name.
const (
	// FrameBeforeReply starts an attachment's delivery before its attach
	// reply takes its place on the session's stream, so a frame of the
	// attachment can come before the reply (delivery-order rule 1).
	FrameBeforeReply = "frame-before-reply"
)
