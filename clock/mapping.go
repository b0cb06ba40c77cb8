package clock

// Mapping is a committed paced-clock mapping: logical time is LogicalStart
// plus the physical time elapsed since WallStartedAt multiplied by Rate.
//
// WallStartedAt and LogicalStart are signed Unix nanoseconds. Rate is a
// positive finite float64; every such value, subnormals included, is valid.
type Mapping struct {
	// WallStartedAt is the UTC instant sampled once when the generation was
	// established.
	WallStartedAt int64
	// LogicalStart is the logical origin requested by START.
	LogicalStart int64
	// Rate is the ratio of logical time to physical elapsed time.
	Rate float64
}
