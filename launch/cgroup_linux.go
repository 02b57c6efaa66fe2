package launch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// pidsCgroup bounds the sandbox's tasks where RLIMIT_NPROC cannot: for
// root, whose processes the rlimit never binds. It is a child of
// mcpseal's own pids cgroup (cgroup v1, or v2 with the pids controller
// delegated).
type pidsCgroup struct {
	dir string
}

var cgroupSeq atomic.Int64

// maxCgroupFile bounds what is read from /proc/self/cgroup and mountinfo.
const maxCgroupFile = 1 << 20

func newPidsCgroup(max int64) (*pidsCgroup, error) {
	base, err := ownPidsCgroup()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(base, fmt.Sprintf("mcpseal-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating a pids cgroup: %w", err)
	}
	c := &pidsCgroup{dir: dir}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatInt(max, 10)), 0); err != nil {
		c.remove()
		return nil, fmt.Errorf("the pids controller is not available in %s: %w", base, err)
	}
	return c, nil
}

// procsFile is the file a process writes "0" to, to join the cgroup.
func (c *pidsCgroup) procsFile() string { return filepath.Join(c.dir, "cgroup.procs") }

// joinCgroup moves the calling process into the cgroup whose procs file
// is given.
func joinCgroup(procs string) error {
	return os.WriteFile(procs, []byte("0"), 0)
}

// procs lists the processes in the cgroup.
func (c *pidsCgroup) procs() []int {
	b, err := os.ReadFile(c.procsFile())
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// refused is how many forks the limit refused.
func (c *pidsCgroup) refused() int64 {
	b, err := os.ReadFile(filepath.Join(c.dir, "pids.events"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "max "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove deletes the cgroup once its processes are gone (they leave it
// a moment after they are reaped).
func (c *pidsCgroup) remove() {
	for i := 0; i < 50; i++ {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ownPidsCgroup finds the folder of this process's pids cgroup.
func ownPidsCgroup() (string, error) {
	mounts, err := readBounded("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	groups, err := readBounded("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var v1Mount, v2Mount string
	sc := bufio.NewScanner(strings.NewReader(mounts))
	for sc.Scan() {
		// id parent major:minor root mountpoint opts... - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 || f[3] != "/" {
			continue
		}
		switch {
		case g[0] == "cgroup" && hasOpt(g[2], "pids"):
			v1Mount = f[4]
		case g[0] == "cgroup2" && v2Mount == "":
			v2Mount = f[4]
		}
	}
	for _, line := range strings.Split(groups, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if v1Mount != "" && hasOpt(parts[1], "pids") {
			return filepath.Join(v1Mount, parts[2]), nil
		}
		if v1Mount == "" && v2Mount != "" && parts[0] == "0" && parts[1] == "" {
			return filepath.Join(v2Mount, parts[2]), nil
		}
	}
	return "", errors.New("no pids cgroup hierarchy is mounted")
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

func readBounded(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCgroupFile))
	return string(b), err
}
