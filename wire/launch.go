package wire

import (
	"errors"
	"strings"

	"github.com/mcpseal/mcpseal/internal/launchline"
)

// RunLine is an `mcpseal run` launch line as the run command reads it.
type RunLine struct {
	// Name is --name; HasName says it was given (a line without it is
	// identified by its command line, and stays so: adding --name would
	// change the server's identity and orphan its pins).
	Name    string
	HasName bool
	// Posture is --posture ("guard" when not given).
	Posture string
	// Lock is --lock, when given.
	Lock string
	// Home is --home: the state folder the line names, whatever
	// environment the client passes ("" when not given).
	Home string
	// Policy is --policy: a host policy that replaces
	// $MCPSEAL_HOME/policy.json for this line.
	Policy string
	// LockHostConfig is --lock-host-config: the lock's trusted keys.
	LockHostConfig string
	// URL is --url, for a remote server.
	URL string
	// Argv is the server command after --.
	Argv []string
}

// RunSyntax reads `mcpseal run` arguments with the run command's own flag
// set, so that a line is called broken exactly when mcpseal would refuse
// it. internal/cli provides it.
type RunSyntax interface {
	// Parse reads the arguments that follow "run".
	Parse(args []string) (RunLine, error)
	// Has reports whether run has the flag (without dashes), so that wrap
	// never writes a flag this mcpseal does not know.
	Has(flag string) bool
}

// Launch is what status and wrap know about a stdio entry's launch line.
type Launch struct {
	// Wrapped: the command is mcpseal and the first argument is run.
	Wrapped bool
	// Line is the parsed run line; valid when Err is nil.
	Line RunLine
	// Err is why mcpseal would refuse the line (or why an npx launch of
	// mcpseal is not counted: no exact version, an unread shape).
	Err error
	// NPX is the mcpseal version of an npx -y mcpseal@VERSION launch.
	NPX string
	// dash is the index in args of the "--" before the server command, or -1.
	dash int
}

// isMcpseal reports whether command names an mcpseal binary: self, or any
// file whose base name is mcpseal.
func isMcpseal(command, self string) bool { return launchline.IsBinary(command, self) }

// readLaunch reads a stdio entry's launch line: mcpseal's binary, or
// npx -y mcpseal@VERSION (package launchline).
func readLaunch(command string, args []string, self string, run RunSyntax) Launch {
	ll, ok := launchline.Split(command, args, self)
	if !ok || len(args) <= ll.Offset || args[ll.Offset] != "run" {
		return Launch{dash: -1}
	}
	l := Launch{Wrapped: true, dash: -1, NPX: ll.NPX}
	if ll.Err != nil {
		l.Err = ll.Err
		return l
	}
	line, err := run.Parse(args[ll.Offset+1:])
	if err != nil {
		l.Err = err
		return l
	}
	l.Line = line
	if line.URL == "" {
		l.dash = len(args) - len(line.Argv) - 1
		if l.dash < ll.Offset+1 || args[l.dash] != "--" {
			l.Err = errors.New("the server command does not follow --")
		}
	}
	return l
}

// wrappedArgs is the args of a wrapped stdio entry.
func wrappedArgs(name string, o *Options, argv []string) []string {
	a := append([]string{"run", "--name", name}, o.flags()...)
	return append(append(a, "--"), argv...)
}

// remoteArgs is the args of a wrapped remote entry.
func remoteArgs(name, url, credential string, o *Options) []string {
	a := []string{"run", "--url", url, "--name", name}
	if credential != "" {
		a = append(a, "--credential-file", credential)
	}
	return append(a, o.flags()...)
}

func (o *Options) flags() []string {
	var a []string
	if o.Lock != "" {
		a = append(a, "--lock", o.Lock)
	}
	if o.Posture != "" {
		a = append(a, "--posture", o.Posture)
	}
	if o.writesHome() {
		a = append(a, "--home", o.Home)
	}
	return a
}

// writesHome reports whether wrapped lines carry --home: the state folder
// then comes from the line itself, so a client that filters the
// environment it gives servers (Codex does) cannot move the pins.
func (o *Options) writesHome() bool {
	return o.Home != "" && o.Run != nil && o.Run.Has("home")
}

// missingFlags returns args with the flags the options ask for and the
// line lacks added before the server command; nil when nothing is missing.
// A flag the line already has with another value is left as it is.
func missingFlags(args []string, l Launch, env map[string]string, o *Options) []string {
	var add []string
	if o.Lock != "" && l.Line.Lock == "" {
		add = append(add, "--lock", o.Lock)
	}
	if lacksHome(l, env, o) {
		add = append(add, "--home", o.Home)
	}
	if len(add) == 0 {
		return nil
	}
	at := len(args)
	if l.dash > 0 {
		at = l.dash
	}
	out := append(append(append([]string{}, args[:at]...), add...), args[at:]...)
	return out
}

// lacksHome reports whether wrap should add --home to a wrapped line: it
// has none and its entry does not choose a state folder with MCPSEAL_HOME
// (status reports such an entry; wrap leaves the choice alone).
func lacksHome(l Launch, env map[string]string, o *Options) bool {
	if !o.writesHome() || l.Line.Home != "" {
		return false
	}
	_, set := env["MCPSEAL_HOME"]
	return !set
}

// shellLine shows a command line on one terminal line, quoting what a
// shell would need quoted. It is for people, not for shells.
func shellLine(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && !strings.ContainsFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r))
		}) {
			b.WriteString(a)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}
