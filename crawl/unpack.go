package crawl

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Unpacking limits for an untrusted tarball.
const (
	// maxUnpacked bounds the bytes a tarball may expand to (a gzip bomb
	// stops here).
	maxUnpacked = 256 << 20
	// maxFiles bounds the files of one package.
	maxFiles = 20000
	// maxPackageJSON bounds package.json.
	maxPackageJSON = 1 << 20
)

// unpack extracts an npm tarball into dir (which must not exist): regular
// files and folders only, every path inside dir, the leading "package/"
// folder stripped. Links, devices and anything else are skipped; no mode
// bit but 0644 and 0755 for folders is kept. Install scripts are never
// run: nothing here executes anything.
func unpack(tgz []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return errors.New("bad-tarball")
	}
	tmp := dir + ".partial"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	tr := tar.NewReader(io.LimitReader(zr, maxUnpacked))
	total, files := int64(0), 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return errors.New("bad-tarball")
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		rel, ok := packagePath(h.Name)
		if !ok {
			continue
		}
		if files++; files > maxFiles {
			return errors.New("too-large")
		}
		if total += h.Size; total > maxUnpacked {
			return errors.New("too-large")
		}
		dst := filepath.Join(tmp, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		_, cerr := io.Copy(f, io.LimitReader(tr, h.Size))
		if err := errors.Join(cerr, f.Close()); err != nil {
			return errors.New("bad-tarball")
		}
	}
	return os.Rename(tmp, dir)
}

// packagePath strips the tarball's top folder and refuses anything that
// would leave the package folder.
func packagePath(name string) (string, bool) {
	name = strings.TrimPrefix(name, "./")
	_, rest, ok := strings.Cut(name, "/")
	if !ok || rest == "" || strings.Contains(rest, "\\") || strings.HasPrefix(rest, "/") {
		return "", false
	}
	clean := path.Clean(rest)
	if clean != rest || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", false
	}
	return clean, true
}

// packageInfo is what the crawler reads of package.json.
type packageInfo struct {
	Name         string            `json:"name"`
	Main         string            `json:"main"`
	Bin          json.RawMessage   `json:"bin"`
	Dependencies map[string]string `json:"dependencies"`
}

// entryPoint returns the script that starts the package's server: its
// bin (the one named after the package when there are several), else its
// main. A package with neither is a library, not a server.
func entryPoint(dir string) (string, *packageInfo, error) {
	f, err := os.Open(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", nil, errors.New("not-a-server")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPackageJSON+1))
	if err != nil || len(b) > maxPackageJSON {
		return "", nil, errors.New("bad-package")
	}
	var pi packageInfo
	if json.Unmarshal(b, &pi) != nil {
		return "", nil, errors.New("bad-package")
	}
	entry := ""
	var bin string
	var bins map[string]string
	switch {
	case json.Unmarshal(pi.Bin, &bin) == nil && bin != "":
		entry = bin
	case json.Unmarshal(pi.Bin, &bins) == nil && len(bins) > 0:
		base := pi.Name[strings.LastIndex(pi.Name, "/")+1:]
		if e, ok := bins[base]; ok {
			entry = e
		} else {
			names := make([]string, 0, len(bins))
			for n := range bins {
				names = append(names, n)
			}
			sort.Strings(names)
			entry = bins[names[0]]
		}
	case pi.Main != "":
		return "", &pi, errors.New("not-a-server") // a library's main is not a server
	default:
		return "", &pi, errors.New("not-a-server")
	}
	rel, ok := packagePath("package/" + strings.TrimPrefix(entry, "./"))
	if !ok {
		return "", &pi, errors.New("bad-package")
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return "", &pi, errors.New("bad-package")
	}
	return p, &pi, nil
}
