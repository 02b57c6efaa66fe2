//go:build linux && !amd64 && !arm64

package launch

import "errors"

func seccompSupported() bool { return false }

func installSeccomp(notify bool) (int, int, error) {
	return -1, 0, errors.New("the seccomp filter is built for amd64 and arm64 only")
}

func syscallName(nr int32) string { return "unknown" }
