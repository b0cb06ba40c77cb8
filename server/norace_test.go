//go:build !race

package server

// raceEnabled: the race detector slows byte-heavy tests about twentyfold.
const raceEnabled = false
