//go:build race

package contract

// Under the race detector code runs several times slower, and sync.Pool
// drops what it is given at random (regexp's machines among them), so
// the cost tests' bounds are scaled: a quadratic cost still passes them
// by far.
const (
	raceSlowdown = 10
	raceAllocs   = 4
)
