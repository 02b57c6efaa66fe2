package main

import (
	"bytes"
	"os"
	"testing"
)

// TestTableIsGenerated: gate/lookalike_table.go is what this generator
// writes now.
func TestTableIsGenerated(t *testing.T) {
	t.Parallel()
	got, err := os.ReadFile("../../gate/lookalike_table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, Source()) {
		t.Fatal("gate/lookalike_table.go is stale: go run ./internal/lookalikegen gate/lookalike_table.go")
	}
}
