package launch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// ErrVerify is wrapped by every *VerifyError: the launch was refused
// because what is on disk, or what was asked for, is not what the
// profile pins.
var ErrVerify = errors.New("launch refused")

// A VerifyError says what did not match the profile. It carries digests
// and fixed descriptions, never argument or environment values.
type VerifyError struct {
	// What is "executable", "tree", "argv" or "cwd".
	What string
	// Want and Got are the pinned and observed digests, when the check
	// compared digests.
	Want, Got string
	// Reason is a fixed description of the mismatch.
	Reason string
}

func (e *VerifyError) Error() string {
	msg := fmt.Sprintf("launch refused: %s: %s", e.What, e.Reason)
	if e.Want != "" || e.Got != "" {
		msg += fmt.Sprintf(" (pinned %s, found %s)", orNone(e.Want), orNone(e.Got))
	}
	return msg
}

func (e *VerifyError) Unwrap() error { return ErrVerify }

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// verified is what verification proved, held open for the launch.
type verified struct {
	exe  *os.File // the executable, opened without following links and hashed
	seen os.FileInfo
	cwd  *os.File // the working folder, opened without following links
	tree TreeStats
}

func (v *verified) Close() {
	if v.exe != nil {
		v.exe.Close()
	}
	if v.cwd != nil {
		v.cwd.Close()
	}
}

// afterVerify runs between verification and launch. Tests set it to swap
// the executable at that moment.
var afterVerify func()

// verify checks a launch request against the profile and the disk: argv
// and cwd as asked for, the executable's bytes (hashed from the very
// descriptor that will be executed), and the package tree. Nothing of the
// environment is read before it succeeds.
func verify(p *Profile, req Request) (*verified, error) {
	if req.Argv != nil && !slices.Equal(req.Argv, p.Argv) {
		return nil, &VerifyError{What: "argv", Reason: argvDifference(p.Argv, req.Argv)}
	}
	if req.Dir != "" && req.Dir != p.Cwd {
		return nil, &VerifyError{What: "cwd", Reason: "the working folder asked for is not the profile's"}
	}
	v := new(verified)
	ok := false
	defer func() {
		if !ok {
			v.Close()
		}
	}()
	var err error
	if v.cwd, err = openNoSymlinks(p.Cwd, true); err != nil {
		return nil, &VerifyError{What: "cwd", Reason: "cannot open the working folder without following links: " + errText(err)}
	}
	if v.exe, err = openNoSymlinks(p.Executable.Path, false); err != nil {
		return nil, &VerifyError{What: "executable", Reason: "cannot open it without following links: " + errText(err)}
	}
	got, err := HashExecutable(v.exe)
	if err != nil {
		return nil, &VerifyError{What: "executable", Reason: errText(err)}
	}
	if v.seen, err = v.exe.Stat(); err != nil {
		return nil, &VerifyError{What: "executable", Reason: errText(err)}
	}
	if got != p.Executable.SHA256 {
		return nil, &VerifyError{What: "executable", Want: p.Executable.SHA256, Got: got, Reason: "its bytes changed since the profile was made"}
	}
	if isScript(v.exe) {
		return nil, &VerifyError{What: "executable", Reason: "it is a #! script; pin its interpreter as the executable and the script's folder as the tree"}
	}
	if p.Tree != nil {
		d, st, err := TreeDigest(p.Tree.Path)
		if err != nil {
			return nil, &VerifyError{What: "tree", Reason: errText(err)}
		}
		if d != p.Tree.Digest {
			return nil, &VerifyError{What: "tree", Want: p.Tree.Digest, Got: d, Reason: "the package tree changed since the profile was made"}
		}
		v.tree = st
	}
	if afterVerify != nil {
		afterVerify()
	}
	// The descriptor is what runs, so a swap cannot change the bytes; but
	// a path that no longer names them means someone is at work on the
	// file, and the launch stops.
	if err := samePath(p.Executable.Path, v.seen); err != nil {
		return nil, &VerifyError{What: "executable", Reason: errText(err)}
	}
	ok = true
	return v, nil
}

// samePath checks that path still names the file that was hashed (seen
// is its state then), unchanged.
func samePath(path string, seen os.FileInfo) error {
	g, err := openNoSymlinks(path, false)
	if err != nil {
		return fmt.Errorf("it was replaced after verification: %v", errText(err))
	}
	defer g.Close()
	a := seen
	b, err := g.Stat()
	if err != nil || !os.SameFile(a, b) {
		return errors.New("it was replaced after verification")
	}
	if a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
		return errors.New("it was modified after verification")
	}
	return nil
}

// isScript reports whether f starts with "#!". A script is run by an
// interpreter that opens the script again by path, which defeats
// executing the verified descriptor.
func isScript(f *os.File) bool {
	var b [2]byte
	n, _ := io.ReadFull(io.NewSectionReader(f, 0, 2), b[:])
	return n == 2 && bytes.Equal(b[:], []byte("#!"))
}

func argvDifference(want, got []string) string {
	if len(want) != len(got) {
		return fmt.Sprintf("the command line has %d arguments, the profile pins %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Sprintf("argument %d differs from the profile's", i)
		}
	}
	return "the command line differs from the profile's"
}

// errText is err's message without the path prefixes the os package adds
// (the paths are the profile's own, already known to the reader).
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
