//go:build !unix

package httpgw

import "io"

// tryWriter is nil where a write that never waits is not available: the
// outbox's goroutine writes every frame.
func tryWriter(io.Writer) func([]byte) (int, error) { return nil }
