package pkgpin

import "strings"

// npmFlags are the launcher options that change nothing about which
// package runs. Anything else before the package is refused.
var npmFlags = map[string]bool{
	"-y": true, "--yes": true, "--no": true, "--no-install": true, "--ignore-existing": true,
	"-q": true, "--quiet": true, "-s": true, "--silent": true,
	"--prefer-offline": true, "--prefer-online": true, "--bun": true,
}

// parseNPM reads the npm-family launchers: npx, npm exec, pnpm dlx, yarn
// dlx and bunx. Their shapes are alike:
//
//	npx [opts] PKG[@VERSION] [args...]
//	npx [opts] --package PKG[@VERSION] [--] BIN [args...]
//
// With --package (-p) the first positional argument names a binary of
// that package, not a package.
func parseNPM(tool string, argv []string, start int) (*Launch, error) {
	l := &Launch{Ecosystem: NPM, Tool: tool, join: "@"}
	pkgIndex, pkgPrefix, pkgValue := -1, "", ""
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
		case npmFlags[a]:
		case flag == "-p" || flag == "--package":
			if pkgIndex >= 0 {
				return nil, notLockable(tool, "more than one --package; a lock pins one package per server")
			}
			if has {
				pkgIndex, pkgPrefix, pkgValue = i, flag+"=", value
				continue
			}
			if i+1 >= len(argv) {
				return nil, notLockable(tool, "%s needs a package", flag)
			}
			i++
			pkgIndex, pkgValue = i, argv[i]
		case flag == "-c" || flag == "--call" || flag == "--shell-mode":
			return nil, notLockable(tool, "%s runs a shell string; mcpseal cannot tell which package it runs", flag)
		case flag == "--registry":
			return nil, notLockable(tool, "a registry chosen on the command line is not supported; set MCPSEAL_NPM_REGISTRY for the lock and configure npm itself")
		default:
			return nil, notLockable(tool, "unknown option %s before the package; mcpseal cannot tell what it changes", quote(flag))
		}
	}
	if pkgIndex < 0 {
		if i >= len(argv) {
			return nil, notLockable(tool, "no package to run")
		}
		pkgIndex, pkgValue = i, argv[i]
	} else if i >= len(argv) {
		return nil, notLockable(tool, "--package needs a command to run after it")
	}
	s, err := parseNPMSpec(tool, pkgValue)
	if err != nil {
		return nil, err
	}
	l.index, l.prefix, l.spec = pkgIndex, pkgPrefix, s
	l.Name = s.name
	if ValidVersion(NPM, s.version) {
		l.Version = s.version
	} else {
		l.Tag = s.version
	}
	return l, nil
}

// parseNPMSpec reads NAME, NAME@VERSION or NAME@TAG, with NAME possibly
// scoped (@scope/name). Everything else npm accepts as a spec — ranges,
// git, GitHub shorthands, URLs, files, aliases — is refused.
func parseNPMSpec(tool, s string) (spec, error) {
	name, version, hasVersion := s, "", false
	at := strings.IndexByte(s, '@')
	if at == 0 {
		at = strings.IndexByte(s[1:], '@')
		if at >= 0 {
			at++
		}
	}
	if at > 0 {
		name, version, hasVersion = s[:at], s[at+1:], true
	}
	if !ValidName(NPM, name) {
		return spec{}, notLockable(tool, "%s is not a registry package name (git, GitHub, file and URL specs cannot be locked)", quote(name))
	}
	if hasVersion && !ValidVersion(NPM, version) && !isNPMTag(version) {
		return spec{}, notLockable(tool, "%s asks for %s, which is not an exact version or a tag; a version range cannot be locked", name, quote(version))
	}
	return spec{name: name, sep: "@", version: version}, nil
}

// isNPMTag reports whether t is a dist-tag that npm cannot read as a
// range: lowercase words, not "x" and not "v" followed by a digit.
func isNPMTag(t string) bool {
	if !npmTagRe().MatchString(t) || t == "x" {
		return false
	}
	return !(len(t) > 1 && t[0] == 'v' && t[1] >= '0' && t[1] <= '9')
}
