package sshsig

import (
	"testing"

	"github.com/mcpseal/mcpseal/internal/depcheck"
)

// TestDependencies keeps sshsig a format package at the bottom of the tree.
func TestDependencies(t *testing.T) {
	t.Parallel()
	depcheck.Only(t, "sshsig")
}
