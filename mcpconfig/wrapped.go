package mcpconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpseal/mcpseal/internal/launchline"
)

// Wrapper is what a server's entry says about mcpseal when mcpseal
// already wraps it.
type Wrapper struct {
	// Name is the --name given to mcpseal run, "" when none.
	Name string
	// Lock is the --lock given to mcpseal run, "" when none.
	Lock string
}

// Unwrap returns the server an "mcpseal run [flags] -- COMMAND ARGS..."
// entry wraps (its command and arguments after "--"; environment and
// folder unchanged), and what the wrapper says. An entry that is not
// wrapped is returned as it is, with a nil Wrapper. Values are read as
// written (before expansion); the command's base name must be mcpseal
// (or mcpseal.exe), or the command is npx -y mcpseal@VERSION (package
// launchline; an npx launch of mcpseal without an exact version is an
// error).
func (s *Server) Unwrap() (Server, *Wrapper, error) {
	ll, ok := launchline.Split(s.Command, s.Args, "")
	if !ok || len(s.Args) <= ll.Offset || s.Args[ll.Offset] != "run" {
		return *s, nil, nil
	}
	if ll.Err != nil {
		return Server{}, nil, fmt.Errorf("server %q: %w", s.Name, ll.Err)
	}
	w := &Wrapper{}
	args := s.Args[ll.Offset+1:]
	dash := slices.Index(args, "--")
	if dash < 0 || dash == len(args)-1 {
		return Server{}, nil, fmt.Errorf("server %q runs mcpseal run without a server command after --", s.Name)
	}
	for i := 0; i < dash; i++ {
		a := args[i]
		for _, flag := range []struct {
			name string
			dst  *string
		}{{"--name", &w.Name}, {"--lock", &w.Lock}} {
			if v, ok := strings.CutPrefix(a, flag.name+"="); ok {
				*flag.dst = v
			} else if a == flag.name && i+1 < dash {
				*flag.dst = args[i+1]
			}
		}
	}
	inner := *s
	inner.Command = args[dash+1]
	inner.Args = slices.Clone(args[dash+2:])
	return inner, w, nil
}
