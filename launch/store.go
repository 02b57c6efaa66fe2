package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Errors that callers branch on.
var (
	// ErrNoProfile: no profile of that name, or no such file.
	ErrNoProfile = errors.New("no such launch profile")
	// ErrProfileExists: Save would replace a profile and was not asked to.
	ErrProfileExists = errors.New("a launch profile of that name exists")
)

// ProfilesDir is the folder of named profiles under mcpseal's home.
func ProfilesDir(home string) string { return filepath.Join(home, "profiles") }

// ProfilePath is the file of the named profile.
func ProfilePath(home, name string) (string, error) {
	if !ValidName(name) {
		return "", fmt.Errorf("%w: %q is not a valid profile name", ErrProfile, name)
	}
	return filepath.Join(ProfilesDir(home), name+".json"), nil
}

// IsFileRef reports whether ref names a profile file rather than a named
// profile: it holds a path separator or ends in ".json".
func IsFileRef(ref string) bool {
	return strings.ContainsRune(ref, filepath.Separator) || strings.ContainsRune(ref, '/') || strings.HasSuffix(ref, ".json")
}

// Load reads the profile ref names: a file (see IsFileRef) or a profile
// under home. It returns the file's path too.
func Load(home, ref string) (*Profile, string, error) {
	path := ref
	if !IsFileRef(ref) {
		var err error
		if path, err = ProfilePath(home, ref); err != nil {
			return nil, "", err
		}
		if err := checkPrivateDir(ProfilesDir(home)); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, "", fmt.Errorf("%w: %s", ErrNoProfile, path)
			}
			return nil, "", err
		}
	} else if abs, err := filepath.Abs(ref); err == nil {
		path = abs
	}
	p, err := LoadFile(path)
	return p, path, err
}

// LoadFile reads and parses a profile file. The file must be a regular
// file (not a symbolic link), owned by this user or root, and writable by
// no one else: a profile decides what runs, so only its owner may change
// it.
func LoadFile(path string) (*Profile, error) {
	f, err := openOwnedFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNoProfile, path)
		}
		return nil, err
	}
	defer f.Close()
	// Why +1: a file of exactly MaxProfileSize is allowed; one byte more
	// is detected without reading the rest.
	data, err := io.ReadAll(io.LimitReader(f, MaxProfileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	p, err := ParseProfile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Save writes p as home/profiles/NAME.json (0600, the folder 0700),
// atomically: a temporary file in the same folder, fsync, rename. It
// refuses to replace an existing profile unless replace is set.
func Save(home string, p *Profile, replace bool) (string, error) {
	data, err := p.MarshalIndent()
	if err != nil {
		return "", err
	}
	path, err := ProfilePath(home, p.Name)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating the profiles folder: %w", err)
	}
	if err := checkPrivateDir(dir); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+p.Name+"-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if replace {
		err = os.Rename(tmp.Name(), path)
	} else {
		// A link, not a rename: it fails instead of replacing a profile
		// another process wrote meanwhile.
		err = os.Link(tmp.Name(), path)
		if errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("%w: %s", ErrProfileExists, path)
		}
	}
	if err != nil {
		return "", err
	}
	syncDir(dir)
	return path, nil
}
