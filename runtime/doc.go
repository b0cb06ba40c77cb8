// Package runtime holds what one node keeps locally for its domains: the
// shared lifecycle allocation per domain with its atomically published
// installation, generation-bound clock handles with lock-free watermarked
// reads, logical deadlines and their wait loop, and the injected time source.
//
// Nothing in this package reads wall time or arms a timer except through the
// TimeSource it is given, so tests drive it with a fake clock.
package runtime
