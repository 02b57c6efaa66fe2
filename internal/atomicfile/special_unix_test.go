//go:build unix

package atomicfile_test

import (
	"errors"
	"github.com/mcpseal/mcpseal/internal/atomicfile/specialtest"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// within fails the test when f does not return in a few seconds: a
// regression that blocks on a FIFO fails instead of hanging the suite.

// specials plants every kind of name a state file must not be, each in
// place of the same base name in its own folder.
func specials(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	base := t.TempDir()
	mk := func(kind string) string {
		d := filepath.Join(base, kind)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(d, "state")
		out[kind] = p
		return p
	}
	specialtest.Mkfifo(t, mk("fifo"))
	if err := os.Mkdir(mk("folder"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A socket path is limited to about 100 bytes, which t.TempDir may
	// pass: the socket gets a short folder of its own.
	if d, err := os.MkdirTemp("", "sock"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		sock := filepath.Join(d, "state")
		if l, err := net.Listen("unix", sock); err == nil {
			t.Cleanup(func() { l.Close() })
			out["socket"] = sock
		}
	}
	real := filepath.Join(base, "real")
	os.WriteFile(real, []byte("secret contents\n"), 0o600)
	if err := os.Symlink(real, mk("symlink")); err != nil {
		t.Fatal(err)
	}
	fifo2 := filepath.Join(base, "fifo2")
	specialtest.Mkfifo(t, fifo2)
	if err := os.Symlink(fifo2, mk("symlink-to-fifo")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", mk("symlink-to-device")); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadFileRefusesSpecialFilesWithoutBlocking(t *testing.T) {
	for kind, path := range specials(t) {
		specialtest.Within(t, func() {
			data, err := atomicfile.ReadFile(path, 1024)
			if !errors.Is(err, atomicfile.ErrNotRegular) {
				t.Errorf("%s: read %q, %v; want ErrNotRegular", kind, data, err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("%s: the error echoes the file: %v", kind, err)
			}
		})
	}
}

func TestOpenFileRefusesSpecialFilesWithoutBlocking(t *testing.T) {
	for kind, path := range specials(t) {
		for _, flag := range []int{
			os.O_WRONLY | os.O_APPEND | os.O_CREATE,
			os.O_RDWR | os.O_CREATE,
			os.O_WRONLY | os.O_CREATE | os.O_TRUNC,
		} {
			specialtest.Within(t, func() {
				f, err := atomicfile.OpenFile(path, flag, 0o600)
				if err == nil {
					f.Close()
				}
				if !errors.Is(err, atomicfile.ErrNotRegular) {
					t.Errorf("%s, flag %#x: %v; want ErrNotRegular", kind, flag, err)
				}
			})
		}
	}
}

func TestTruncateNeverReachesALinkTarget(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep me"), 0o600)
	link := filepath.Join(dir, "record.json.new")
	os.Symlink(victim, link)
	if f, err := atomicfile.OpenFile(link, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err == nil {
		f.Close()
		t.Fatal("opened a symbolic link for writing")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Fatalf("the link's target was truncated: %q", b)
	}
}

func TestFollowFormsFollowLinksToRegularFilesOnly(t *testing.T) {
	s := specials(t)
	specialtest.Within(t, func() {
		if b, err := atomicfile.ReadFileFollow(s["symlink"], 1024); err != nil || string(b) != "secret contents\n" {
			t.Errorf("a link to a regular file: %q, %v", b, err)
		}
		for _, kind := range []string{"fifo", "folder", "symlink-to-fifo", "symlink-to-device"} {
			if _, err := atomicfile.ReadFileFollow(s[kind], 1024); !errors.Is(err, atomicfile.ErrNotRegular) {
				t.Errorf("%s: %v; want ErrNotRegular", kind, err)
			}
		}
	})
}

func TestWriteFileReplacesAPlantedFIFOAndLink(t *testing.T) {
	s := specials(t)
	for _, kind := range []string{"fifo", "symlink"} {
		specialtest.Within(t, func() {
			if err := atomicfile.WriteFile(s[kind], []byte("new"), 0o600); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if b, err := atomicfile.ReadFile(s[kind], 1024); err != nil || string(b) != "new" {
				t.Errorf("%s: read back %q, %v", kind, b, err)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(s["symlink"])), "real")); string(b) != "secret contents\n" {
		t.Errorf("the write went through the link: %q", b)
	}
}

func TestSyncDirRefusesAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pins")
	specialtest.Mkfifo(t, p)
	specialtest.Within(t, func() {
		if err := atomicfile.SyncDir(p); err == nil {
			t.Error("synced a FIFO as a folder")
		}
	})
}
