package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpseal/mcpseal/internal/testmcp"
	"github.com/mcpseal/mcpseal/stdio"
)

// BenchmarkStartup measures, in one run, the time from nothing to an
// answered initialize and back to nothing, for the same server started
// unconfined (stdio.StartChild) and under its profile (verification of
// the executable and tree, the sandbox's two helper stages, every
// confinement). Each iteration runs both, one after the other, so that a
// busy machine slows both alike; the metrics are their means and the
// difference, what the sandbox adds:
//
//	go test ./launch -run '^$' -bench Startup -benchtime 20x
//
// node-memory repeats it for the npm server-memory: its profile pins
// Node.js (about 100 MB, hashed at every launch) and a 4,300-file package
// tree.
func BenchmarkStartup(b *testing.B) {
	servers := []struct {
		name string
		argv []string
		tree string
	}{{name: "hostile-go", argv: []string{hostileBin}}}
	nm := filepath.Join("..", "e2e", "node", "node_modules")
	script, _ := filepath.Abs(filepath.Join(nm, "@modelcontextprotocol", "server-memory", "dist", "index.js"))
	if node, err := exec.LookPath("node"); err == nil {
		if _, err := os.Stat(script); err == nil {
			real, _ := filepath.EvalSymlinks(node)
			tree, _ := filepath.Abs(nm)
			servers = append(servers, struct {
				name string
				argv []string
				tree string
			}{"node-memory", []string{real, script}, tree})
		}
	}
	for _, s := range servers {
		b.Run(s.name, func(b *testing.B) {
			mem := b.TempDir()
			env := []string{"MEMORY_FILE_PATH=" + filepath.Join(mem, "m.jsonl")}
			p := benchProfile(b, s.argv, s.tree, mem)
			var plain, boxed time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				srv, err := stdio.StartChild(s.argv, env, "/")
				if err != nil {
					b.Fatal(err)
				}
				roundTrip(b, srv)
				t1 := time.Now()
				sb, _, err := Start(p, Request{})
				if err != nil {
					b.Fatal(err)
				}
				roundTrip(b, sb)
				t2 := time.Now()
				plain += t1.Sub(t0)
				boxed += t2.Sub(t1)
			}
			n := float64(b.N)
			b.ReportMetric(float64(plain.Milliseconds())/n, "unconfined-ms/op")
			b.ReportMetric(float64(boxed.Milliseconds())/n, "sandboxed-ms/op")
			b.ReportMetric(float64((boxed-plain).Milliseconds())/n, "added-ms/op")
		})
	}
}

func benchProfile(b testing.TB, argv []string, tree, mem string) *Profile {
	p := hostileProfile(b)
	p.Executable = Executable{Path: argv[0], SHA256: fileSHA256(b, argv[0])}
	p.Argv = argv
	p.Env.Set["MEMORY_FILE_PATH"] = filepath.Join(mem, "m.jsonl")
	p.Filesystem.ReadWrite = []string{mem}
	p.Filesystem.ReadOnly = existing(systemReadOnly)
	p.Limits.MemoryBytes = 2 << 30
	p.Limits.Processes = 64
	p.Limits.OpenFiles = 1024
	if tree != "" {
		d, _, err := TreeDigest(tree)
		if err != nil {
			b.Fatal(err)
		}
		p.Tree = &Tree{Path: tree, Digest: d}
		p.Filesystem.ReadOnly = append(p.Filesystem.ReadOnly, "/etc/ssl/openssl.cnf")
	}
	p.Filesystem.ReadOnly = sortedSet(p.Filesystem.ReadOnly)
	if err := p.Validate(); err != nil {
		b.Fatal(err)
	}
	return p
}

// roundTrip answers one initialize and stops the server: stdin closed,
// then the wait.
func roundTrip(b *testing.B, srv stdio.Server) {
	c := testmcp.NewClient(srv.Stdout(), srv.Stdin())
	c.Timeout = 30 * time.Second
	go drainStderr(srv)
	if _, err := c.Call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}}); err != nil {
		b.Fatal(err)
	}
	srv.Stdin().Close()
	done := make(chan struct{})
	go func() { srv.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		srv.Kill()
		<-done
	}
	c.Close()
}

// drainStderr reads the server's stderr until it ends.
func drainStderr(srv stdio.Server) {
	buf := make([]byte, 4096)
	for {
		if _, err := srv.Stderr().Read(buf); err != nil {
			return
		}
	}
}
