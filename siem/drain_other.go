//go:build !linux

package siem

import "net"

// unacked cannot be known here: a write that returned is taken as sent,
// and the resend window (syslogResend) is all there is.
func unacked(net.Conn) (int, bool) { return 0, false }
