package pkgpin

import (
	"regexp"
	"strings"
	"sync"
)

// Options of docker run and podman run that take no value. Every other
// long option without "=" is read as taking the next argument; a short
// cluster may hold boolean letters and end in one value letter.
var (
	ociBoolLong = map[string]bool{
		"--rm": true, "--interactive": true, "--tty": true, "--detach": true, "--init": true,
		"--privileged": true, "--read-only": true, "--publish-all": true, "--no-healthcheck": true,
		"--oom-kill-disable": true, "--quiet": true, "--sig-proxy": true, "--disable-content-trust": true,
		"--replace": true, "--rmi": true, "--env-host": true, "--read-only-tmpfs": true, "--tls-verify": true,
	}
	ociBoolShort  = "itdPq"
	ociValueShort = "evpwulmhac"
)

var ociImageRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([^@:]+(?::[0-9]{1,5}/[^@:]+)?)(?::([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(.+))?$`)
})

// parseOCI reads docker run and podman run: the first argument after the
// options is the image. Only an image pinned by digest
// (REPOSITORY[:TAG]@sha256:...) can be locked; a launch by tag is
// recognised with an empty Digest.
func parseOCI(tool string, argv []string, start int) (*Launch, error) {
	i := start
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		if strings.HasPrefix(a, "--") {
			if !strings.Contains(a, "=") && !ociBoolLong[a] {
				i++ // --env FOO, --volume a:b, ...
			}
			continue
		}
		letters := a[1:]
		for j, c := range letters {
			switch {
			case strings.ContainsRune(ociBoolShort, c):
			case strings.ContainsRune(ociValueShort, c):
				if j == len(letters)-1 {
					i++ // the value is the next argument
				}
				// otherwise the rest of the cluster is the value (-eFOO=1)
			default:
				return nil, notLockable(tool, "unknown option %s before the image; write long options as --name=value", quote(a))
			}
			if strings.ContainsRune(ociValueShort, c) {
				break
			}
		}
	}
	if i >= len(argv) {
		return nil, notLockable(tool, "no image to run")
	}
	m := ociImageRe().FindStringSubmatch(argv[i])
	if m == nil || !ValidName(OCI, m[1]) {
		return nil, notLockable(tool, "%s is not an image reference mcpseal can read", quote(argv[i]))
	}
	l := &Launch{Ecosystem: OCI, Tool: tool, Name: m[1], Tag: m[2], index: i}
	if m[3] != "" {
		if !ociDigestRe().MatchString(m[3]) {
			return nil, notLockable(tool, "image digest %s is not sha256: and 64 lowercase hex digits", quote(m[3]))
		}
		l.Digest = m[3]
	}
	return l, nil
}
