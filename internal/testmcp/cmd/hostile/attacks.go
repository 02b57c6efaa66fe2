package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func attackRead(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return outcome("read "+path, err)
	}
	return fmt.Sprintf("ok: read %s: %d bytes: %s", path, len(b), strings.TrimSpace(string(b)))
}

func attackWrite(path string) string {
	return outcome("write "+path, os.WriteFile(path, []byte("written by hostile\n"), 0o600))
}

func attackConnect(addr string) string {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return outcome("connect "+addr, err)
	}
	c.Close()
	return "ok: connected to " + addr
}

func attackUnix(path string) string {
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return outcome("connect unix "+path, err)
	}
	c.Close()
	return "ok: connected to unix socket " + path
}

// attackFork starts n processes that sleep until they are killed.
func attackFork(n int) string {
	started := 0
	var first error
	for i := 0; i < n; i++ {
		if _, err := forkSleeper(false); err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		started++
	}
	if first != nil {
		return fmt.Sprintf("denied: started %d of %d processes: %v", started, n, first)
	}
	return fmt.Sprintf("ok: started %d of %d processes", started, n)
}

// attackAlloc allocates and touches n bytes; under a memory limit the Go
// runtime dies before it answers.
func attackAlloc(n int64) string {
	var chunks [][]byte
	for left := n; left > 0; left -= 1 << 20 {
		c := make([]byte, min(left, 1<<20))
		for i := 0; i < len(c); i += 4096 {
			c[i] = 1
		}
		chunks = append(chunks, c)
	}
	return fmt.Sprintf("ok: allocated %d bytes in %d chunks", n, len(chunks))
}

var sink uint64

func attackSpin(seconds int) string {
	end := time.Now().Add(time.Duration(seconds) * time.Second)
	for time.Now().Before(end) {
		for i := 0; i < 1e6; i++ {
			sink += uint64(i)
		}
	}
	return fmt.Sprintf("ok: spun for %d s", seconds)
}

// attackEnviron looks for marker in its own environment and in every
// /proc/PID/environ it can read.
func attackEnviron(marker string) string {
	var found, readable []string
	for _, kv := range os.Environ() {
		if strings.Contains(kv, marker) {
			found = append(found, "own environment")
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		readable = append(readable, e.Name())
		if strings.Contains(string(b), marker) {
			found = append(found, "/proc/"+e.Name()+"/environ")
		}
	}
	if _, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", os.Getppid())); err == nil {
		readable = append(readable, "parent")
	}
	if len(found) > 0 {
		return "ok: marker found in " + strings.Join(found, ", ")
	}
	return fmt.Sprintf("denied: marker not found; readable environments: %d", len(readable))
}

// attackOrphan leaves a child behind that ignores SIGTERM and is in a
// session (and process group) of its own.
func attackOrphan() string {
	signal.Ignore(syscall.SIGTERM)
	pid, err := forkSleeper(true)
	if err != nil {
		return outcome("fork", err)
	}
	return fmt.Sprintf("ok: child %d ignores SIGTERM in its own session", pid)
}

func attackEgress(target string) string {
	proxy := strings.TrimPrefix(os.Getenv("HTTPS_PROXY"), "http://")
	if proxy == "" {
		return "denied: no HTTPS_PROXY"
	}
	c, err := net.DialTimeout("tcp", proxy, 2*time.Second)
	if err != nil {
		return outcome("connect to the proxy", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil {
		return outcome("CONNECT", err)
	}
	status = strings.TrimSpace(status)
	if !strings.Contains(status, " 200 ") {
		return "denied: " + status
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return outcome("CONNECT headers", err)
		}
		if strings.TrimSpace(line) == "" {
			break
		}
	}
	fmt.Fprintf(c, "ping\n")
	echo, err := br.ReadString('\n')
	if err != nil {
		return outcome("exchange through the tunnel", err)
	}
	return "ok: " + status + "; echo " + strings.TrimSpace(echo)
}

func attackExec(path string) string {
	out, err := exec.Command(path).CombinedOutput()
	if err != nil {
		return outcome("exec "+path, err)
	}
	return fmt.Sprintf("ok: exec %s: %d bytes of output", path, len(out))
}

func attackSleep(ms int) string {
	time.Sleep(time.Duration(ms) * time.Millisecond)
	return fmt.Sprintf("ok: slept %d ms", ms)
}

func attackFlood(n int64) string {
	if n > 1<<30 {
		return "error: at most 1 GiB"
	}
	return strings.Repeat("x", int(n))
}

var errUnsupported = errors.New("not supported on this platform")
