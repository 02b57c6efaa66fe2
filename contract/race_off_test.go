//go:build !race

package contract

// See race_on_test.go.
const (
	raceSlowdown = 1
	raceAllocs   = 1
)
