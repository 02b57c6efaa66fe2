package releasebuild

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
	"time"
)

var when = time.Unix(1796126239, 0)

// TestArchivesIgnoreOrderAndHost: the archives depend on the files only,
// not on the order they were listed in or on the machine's clock.
func TestArchivesIgnoreOrderAndHost(t *testing.T) {
	t.Parallel()
	a := []file{{name: "mcpseal", mode: 0o755, data: []byte("bin")}, {name: "README.md", mode: 0o644, data: []byte("read me")}}
	b := []file{a[1], a[0]}
	for _, f := range []func([]file, time.Time) ([]byte, error){tarGz, zipArchive} {
		x, err := f(a, when)
		if err != nil {
			t.Fatal(err)
		}
		y, err := f(b, when)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Error("the member order changed the archive")
		}
	}
	gz, _ := tarGz(a, when)
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header carries name %q, time %v", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(when) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: time %v, owner %d:%d %q:%q", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname)
		}
	}
	if len(names) != 2 || names[0] != "README.md" {
		t.Errorf("members %v", names)
	}
	z, _ := zipArchive(a, when)
	zf, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zf.File {
		if f.Name == "mcpseal" && f.Mode() != 0o755 {
			t.Errorf("zip mode %v", f.Mode())
		}
	}
}

func TestImageLayerOwners(t *testing.T) {
	t.Parallel()
	gz, err := imageLayer([]byte("bin"), when)
	if err != nil {
		t.Fatal(err)
	}
	zr, _ := gzip.NewReader(bytes.NewReader(gz))
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		wantUID := 0
		if h.Name == "home/nonroot/" {
			wantUID = imageUID
		}
		if h.Uid != wantUID {
			t.Errorf("%s owned by %d", h.Name, h.Uid)
		}
		if h.Name == "tmp/" && h.Mode&0o1000 == 0 {
			t.Errorf("/tmp is not sticky: %o", h.Mode)
		}
	}
}

func TestVersionsAndTargets(t *testing.T) {
	t.Parallel()
	for v, ok := range map[string]bool{"0.3.0": true, "1.0.0-rc.1": true, "v0.3.0": false, "0.3": false, "01.2.3": false, "0.3.0 ": false, "0.3.0;rm": false} {
		if ValidVersion(v) != ok {
			t.Errorf("ValidVersion(%q) = %v", v, !ok)
		}
	}
	want := map[string]string{"linux/amd64": "@mcpseal/linux-x64", "darwin/arm64": "@mcpseal/darwin-arm64", "windows/amd64": "@mcpseal/win32-x64", "windows/arm64": "@mcpseal/win32-arm64"}
	for s, pkg := range want {
		tg, err := ParseTarget(s)
		if err != nil || tg.NPMPackage() != pkg {
			t.Errorf("%s: %v %v", s, tg.NPMPackage(), err)
		}
	}
	if _, err := ParseTarget("linux/386"); err == nil {
		t.Error("linux/386 accepted")
	}
}
