package pkgpin

import (
	"regexp"
	"strings"
	"sync"
)

// uvFlags change nothing about which package runs.
var uvFlags = map[string]bool{
	"-q": true, "--quiet": true, "-v": true, "--verbose": true, "-n": true, "--no-cache": true,
	"--offline": true, "--isolated": true, "--refresh": true, "--no-progress": true, "--native-tls": true,
	"--no-config": true, "--managed-python": true, "--no-managed-python": true, "--no-python-downloads": true,
}

// uvValueFlags take a value that changes nothing about which package runs.
var uvValueFlags = map[string]bool{"-p": true, "--python": true, "--cache-dir": true, "--color": true}

// uvRefused are options that add packages or choose an index: what they
// install is outside the lock.
var uvRefused = map[string]string{
	"--with": "adds packages the lock does not pin", "-w": "adds packages the lock does not pin",
	"--with-requirements": "adds packages the lock does not pin", "--with-editable": "adds packages the lock does not pin",
	"--index": "chooses an index", "--index-url": "chooses an index", "--extra-index-url": "chooses an index",
	"--default-index": "chooses an index", "-i": "chooses an index", "--find-links": "chooses an index", "-f": "chooses an index",
}

var pipxFlags = map[string]bool{"-q": true, "--quiet": true, "-v": true, "--verbose": true, "--no-cache": true}

// parseUV reads uvx and uv tool run:
//
//	uvx [opts] NAME[@VERSION|==VERSION] [args...]
//	uvx [opts] --from NAME[==VERSION] COMMAND [args...]
func parseUV(tool string, argv []string, start int) (*Launch, error) {
	l := &Launch{Ecosystem: PyPI, Tool: tool}
	fromIndex, fromPrefix, fromValue := -1, "", ""
	i := start
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		flag, value, has := baseArg(a)
		switch {
		case uvFlags[a]:
		case uvValueFlags[flag]:
			if !has {
				i++
			}
		case flag == "--from":
			if fromIndex >= 0 {
				return nil, notLockable(tool, "more than one --from")
			}
			if has {
				fromIndex, fromPrefix, fromValue = i, "--from=", value
				continue
			}
			if i+1 >= len(argv) {
				return nil, notLockable(tool, "--from needs a package")
			}
			i++
			fromIndex, fromValue = i, argv[i]
		case uvRefused[flag] != "":
			return nil, notLockable(tool, "%s %s; a lock pins one package per server", flag, uvRefused[flag])
		default:
			return nil, notLockable(tool, "unknown option %s before the package; mcpseal cannot tell what it changes", quote(flag))
		}
	}
	if i >= len(argv) {
		return nil, notLockable(tool, "no command to run")
	}
	index, prefix, value := i, "", argv[i]
	if fromIndex >= 0 {
		index, prefix, value = fromIndex, fromPrefix, fromValue
	}
	s, err := parsePyPISpec(tool, value, true)
	if err != nil {
		return nil, err
	}
	l.index, l.prefix = index, prefix
	// Rewrite as written; with nothing written, uvx NAME@VERSION is uv's
	// documented form and --from takes a requirement, NAME==VERSION.
	switch {
	case s.sep != "":
		l.join = s.sep
	case fromIndex >= 0:
		l.join = "=="
	default:
		l.join = "@"
	}
	return l.withSpec(s), nil
}

// parsePipx reads pipx run:
//
//	pipx run [opts] NAME[==VERSION] [args...]
//	pipx run [opts] --spec NAME[==VERSION] APP [args...]
func parsePipx(argv []string, start int) (*Launch, error) {
	const tool = "pipx run"
	l := &Launch{Ecosystem: PyPI, Tool: tool, join: "=="}
	specIndex, specPrefix, specValue := -1, "", ""
	i := start
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		flag, value, has := baseArg(a)
		switch {
		case pipxFlags[a]:
		case flag == "--python":
			if !has {
				i++
			}
		case flag == "--spec":
			if specIndex >= 0 {
				return nil, notLockable(tool, "more than one --spec")
			}
			if has {
				specIndex, specPrefix, specValue = i, "--spec=", value
				continue
			}
			if i+1 >= len(argv) {
				return nil, notLockable(tool, "--spec needs a package")
			}
			i++
			specIndex, specValue = i, argv[i]
		case flag == "--pip-args" || flag == "--index-url" || flag == "-i" || flag == "--editable" || flag == "-e":
			return nil, notLockable(tool, "%s changes what pip installs; it cannot be locked", flag)
		default:
			return nil, notLockable(tool, "unknown option %s before the app; mcpseal cannot tell what it changes", quote(flag))
		}
	}
	if i >= len(argv) {
		return nil, notLockable(tool, "no app to run")
	}
	if specIndex >= 0 {
		s, err := parsePyPISpec(tool, specValue, false)
		if err != nil {
			return nil, err
		}
		l.index, l.prefix = specIndex, specPrefix
		return l.withSpec(s), nil
	}
	s, err := parsePyPISpec(tool, argv[i], false)
	if err != nil {
		return nil, err
	}
	l.index, l.insert = i, true
	return l.withSpec(s), nil
}

func (l *Launch) withSpec(s spec) *Launch {
	l.spec = s
	l.Name = NormalizePyPI(s.name)
	switch {
	case s.version == "latest":
		l.Tag = "latest"
	case s.version != "":
		l.Version = s.version
	}
	return l
}

var pypiSpecRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?)(\[[A-Za-z0-9][A-Za-z0-9._-]*(?:,[A-Za-z0-9][A-Za-z0-9._-]*)*\])?(?:(==|@)(.*))?$`)
})

// parsePyPISpec reads NAME[EXTRAS], NAME[EXTRAS]==VERSION and (uv only)
// NAME[EXTRAS]@VERSION or NAME@latest. Ranges (>=, ~=, !=, <, >, ===,
// commas), markers, URLs, paths and VCS specs are refused.
func parsePyPISpec(tool, s string, at bool) (spec, error) {
	m := pypiSpecRe().FindStringSubmatch(s)
	if m == nil {
		return spec{}, notLockable(tool, "%s is not a plain PyPI requirement (ranges, markers, URLs and paths cannot be locked)", quote(s))
	}
	sp := spec{name: m[1], extras: m[2], sep: m[3], version: m[4]}
	if sp.sep == "@" && !at {
		return spec{}, notLockable(tool, "%s: pipx takes NAME==VERSION", quote(s))
	}
	if sp.sep != "" && !ValidVersion(PyPI, sp.version) && !(sp.sep == "@" && sp.version == "latest") {
		return spec{}, notLockable(tool, "%s asks for %s, which is not an exact version; a version range cannot be locked", sp.name, quote(sp.version))
	}
	return sp, nil
}
