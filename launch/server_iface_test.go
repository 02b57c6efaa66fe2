//go:build linux

package launch

import "github.com/mcpseal/mcpseal/stdio"

// A launched server is a stdio.Server; launch itself does not import the
// transport, so that packages below the gate (the crawler) can use it.
var _ stdio.Server = (*Server)(nil)
