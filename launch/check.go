package launch

import (
	"errors"
	"fmt"
	"os"
)

// A CheckLine is one line of a readiness check.
type CheckLine struct {
	Item     string // "profile", "executable", "tree", "cwd", or a Confinement
	OK       bool
	Required bool // a false OK on a required line makes the launch refuse
	Detail   string
}

// Check reports whether p can be launched here, line by line: the
// profile's digest, the executable and tree against their pins, the
// working folder, and each confinement as this kernel enforces it (found
// by starting the sandbox's helper, which confines itself and exits
// without executing anything). Ready is false when a required line is not
// OK.
func Check(p *Profile) (lines []CheckLine, ready bool) {
	digest, err := p.Digest()
	if err != nil {
		return []CheckLine{{Item: "profile", Required: true, Detail: err.Error()}}, false
	}
	lines = append(lines, CheckLine{Item: "profile", OK: true, Required: true, Detail: p.Name + " " + digest})
	v, err := verify(p, Request{})
	switch {
	case err == nil:
		lines = append(lines, CheckLine{Item: "executable", OK: true, Required: true, Detail: p.Executable.Path + " matches " + p.Executable.SHA256})
		if p.Tree != nil {
			lines = append(lines, CheckLine{Item: "tree", OK: true, Required: true, Detail: fmt.Sprintf("%s matches %s (%d files)", p.Tree.Path, p.Tree.Digest, v.tree.Files)})
		} else {
			lines = append(lines, CheckLine{Item: "tree", OK: true, Detail: "none pinned (a self-contained executable)"})
		}
		lines = append(lines, CheckLine{Item: "cwd", OK: true, Required: true, Detail: p.Cwd})
		v.Close()
	default:
		lines = append(lines, verifyLine(err))
	}
	lines = append(lines, probeLines(p)...)
	ready = true
	for _, l := range lines {
		if l.Required && !l.OK {
			ready = false
		}
	}
	return lines, ready
}

func verifyLine(err error) CheckLine {
	var ve *VerifyError
	if errors.As(err, &ve) {
		return CheckLine{Item: ve.What, Required: true, Detail: ve.Error()}
	}
	return CheckLine{Item: "executable", Required: true, Detail: err.Error()}
}

// probeLines starts the helper in probe mode under p's confinements.
func probeLines(p *Profile) []CheckLine {
	exe, err1 := os.Open(os.DevNull)
	cwd, err2 := os.Open("/")
	if err1 != nil || err2 != nil {
		return []CheckLine{{Item: "sandbox", Required: true, Detail: "cannot open /dev/null and /"}}
	}
	v := &verified{exe: exe, cwd: cwd}
	defer v.Close()
	probe := func() (*Report, error) {
		rep := new(Report)
		srv, err := startSandbox(p, v, nil, nil, rep, true)
		if err == nil {
			err = srv.Wait()
		}
		return rep, err
	}
	rep, err := probe()
	if endedUnreported(err) {
		// Seen under heavy parallel load: the probe confined itself and
		// reported it, then its exit report never came. Probe once more;
		// a second such end is reported as it is.
		rep, err = probe()
	}
	var lines []CheckLine
	for _, e := range rep.Enforced {
		lines = append(lines, CheckLine{Item: string(e.Confinement), OK: true, Required: e.Required, Detail: e.Detail})
	}
	for _, e := range rep.NotEnforced {
		lines = append(lines, CheckLine{Item: string(e.Confinement), Required: e.Required, Detail: "not enforced: " + e.Detail})
	}
	if err != nil {
		lines = append(lines, CheckLine{Item: "sandbox", Required: true, Detail: err.Error()})
	} else {
		lines = append(lines, CheckLine{Item: "sandbox", OK: true, Required: true, Detail: "the helper started and confined itself"})
	}
	return lines
}
