package cli

import (
	"errors"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/wire"
)

// runSyntax reads `mcpseal run` launch lines with the run command's own
// flag set (newRunCmd), so wrap writes only flags run knows and status
// calls a line broken exactly when run would refuse it.
type runSyntax struct{}

// RunSyntax is the wire.RunSyntax of this binary's run command.
func RunSyntax() wire.RunSyntax { return runSyntax{} }

func (runSyntax) flags() *cobra.Command {
	quiet := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	return newRunCmd(quiet)
}

// Has reports whether run has the flag.
func (s runSyntax) Has(flag string) bool {
	return s.flags().Flags().Lookup(flag) != nil
}

// Parse reads the arguments that follow "run" and applies the checks run
// applies before it starts anything.
func (s runSyntax) Parse(args []string) (wire.RunLine, error) {
	cmd := s.flags()
	fl := cmd.Flags()
	if err := fl.Parse(args); err != nil {
		return wire.RunLine{}, err
	}
	var l wire.RunLine
	l.Name, _ = fl.GetString("name")
	l.HasName = fl.Changed("name")
	l.Posture, _ = fl.GetString("posture")
	if fl.Lookup("lock") != nil {
		l.Lock, _ = fl.GetString("lock")
	}
	if fl.Lookup("url") != nil {
		l.URL, _ = fl.GetString("url")
	}
	l.Policy, _ = fl.GetString("policy")
	l.LockHostConfig, _ = fl.GetString("lock-host-config")
	if fl.Lookup("home") != nil {
		l.Home, _ = fl.GetString("home")
		if fl.Changed("home") && !filepath.IsAbs(l.Home) {
			return l, errors.New("--home must be an absolute path")
		}
	}
	rest := fl.Args()
	switch {
	case l.URL != "":
		if len(rest) != 0 {
			return l, errors.New("run --url takes no server command")
		}
	case fl.ArgsLenAtDash() != 0 || len(rest) == 0:
		return l, errors.New("run needs the server command after --")
	default:
		l.Argv = rest
	}
	if _, err := pin.ParsePosture(l.Posture); err != nil {
		return l, err
	}
	if n, _ := fl.GetInt("max-frame"); n < 1024 {
		return l, errors.New("--max-frame must be at least 1024 bytes")
	}
	level, _ := fl.GetString("log-level")
	if _, err := newLogger(io.Discard, level); err != nil {
		return l, err
	}
	return l, nil
}
