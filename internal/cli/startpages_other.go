//go:build !linux

package cli

// dropStartPages is dropStartPages of startpages_linux.go: elsewhere
// mcpseal leaves its resident set to the system.
func dropStartPages() {}
