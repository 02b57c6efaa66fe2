package mcpconfig

import (
	"slices"
	"testing"
)

// TestUnwrapNPXLaunch: the lock reads a server behind npx -y mcpseal@X
// as it reads one behind the binary, and refuses an unpinned npx launch.
func TestUnwrapNPXLaunch(t *testing.T) {
	t.Parallel()
	s := &Server{Name: "m", Command: "npx", Args: []string{"-y", "mcpseal@0.3.0", "run", "--name", "memory", "--lock", "/etc/l.lock", "--", "npx", "-y", "@modelcontextprotocol/server-memory@2025.1.1"}}
	inner, w, err := s.Unwrap()
	if err != nil || w == nil || w.Name != "memory" || w.Lock != "/etc/l.lock" || inner.Command != "npx" || !slices.Equal(inner.Args, []string{"-y", "@modelcontextprotocol/server-memory@2025.1.1"}) {
		t.Fatalf("Unwrap = %+v, %+v, %v", inner, w, err)
	}
	for _, args := range [][]string{
		{"-y", "mcpseal@latest", "run", "--", "srv"},
		{"-y", "mcpseal", "run", "--", "srv"},
		{"--package=evil@1.0.0", "-y", "mcpseal@0.3.0", "run", "--", "srv"},
	} {
		if _, _, err := (&Server{Name: "m", Command: "npx", Args: args}).Unwrap(); err == nil {
			t.Errorf("Unwrap(npx %v) accepted an npx launch of mcpseal that is not pinned", args)
		}
	}
	// A server that is not mcpseal is returned as it is.
	plain := &Server{Name: "m", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory", "run"}}
	if inner, w, err := plain.Unwrap(); err != nil || w != nil || inner.Command != "npx" {
		t.Errorf("Unwrap(plain) = %+v, %+v, %v", inner, w, err)
	}
}
