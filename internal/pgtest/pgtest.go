// Package pgtest gives tests a real PostgreSQL: a throwaway cluster that
// it creates (initdb) in a temporary folder, serves on a random port of
// 127.0.0.1 as an unprivileged user, and removes afterwards. A test binary
// starts one cluster in TestMain (Main) and every test gets a fresh
// database of it (DSN), so tests run in parallel; a test that stops and
// starts its database (a fault test) makes a cluster of its own (New).
//
// The server binaries come from $MCPSEAL_TEST_PGBIN, else the newest
// /usr/lib/postgresql/*/bin (Debian's postgresql package, which
// scripts/test installs when it is missing), else $PATH. A missing
// PostgreSQL fails the tests: it is never a skip.
//
// The superuser's password is random and reaches clients the way the
// product takes it, through PGPASSWORD: Main sets it for the test binary
// and every process it starts.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// User is the cluster's superuser.
const User = "mcpseal"

// A Cluster is one running throwaway PostgreSQL.
type Cluster struct {
	bin  string
	dir  string // holds data/ and the password file
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

var (
	shared     *Cluster
	sharedErr  error
	sharedOnce sync.Once
	dbCount    atomic.Int64
)

// password is the superuser's, shared by every cluster of this process.
var password = func() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}()

// Main starts the shared cluster, runs the tests and removes it.
func Main(m *testing.M) {
	os.Setenv("PGPASSWORD", password)
	c, err := start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: error: %v\n", err)
		fmt.Fprintln(os.Stderr, "pgtest: hint: install PostgreSQL (apt-get install postgresql) or set MCPSEAL_TEST_PGBIN")
		os.Exit(1)
	}
	sharedOnce.Do(func() { shared = c })
	code := m.Run()
	Stop()
	os.Exit(code)
}

// DSN creates a fresh database in the shared cluster and returns its
// connection string (without the password). Without Main, the first call
// starts the cluster; the test binary's TestMain then calls Stop.
func DSN(t testing.TB) string {
	t.Helper()
	sharedOnce.Do(func() {
		os.Setenv("PGPASSWORD", password)
		shared, sharedErr = start()
	})
	if sharedErr != nil {
		t.Fatalf("pgtest: %v", sharedErr)
	}
	return shared.CreateDB(t)
}

// Stop removes the shared cluster, if one was started.
func Stop() {
	sharedOnce.Do(func() {})
	if shared != nil {
		shared.remove()
	}
}

// New starts a cluster of the test's own, removed when it ends.
func New(t testing.TB) *Cluster {
	t.Helper()
	os.Setenv("PGPASSWORD", password)
	c, err := start()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(c.remove)
	return c
}

// Port returns the cluster's port.
func (c *Cluster) Port() int { return c.port }

// URL returns the connection string of database db.
func (c *Cluster) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(User), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)), Path: "/" + db, RawQuery: "sslmode=disable&connect_timeout=5"}
	return u.String()
}

// CreateDB creates a fresh database and returns its connection string.
func (c *Cluster) CreateDB(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbCount.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" STRATEGY FILE_COPY"); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return c.URL(name)
}

// binDir finds the folder of initdb and postgres.
func binDir() (string, error) {
	if d := os.Getenv("MCPSEAL_TEST_PGBIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL's initdb was not found (/usr/lib/postgresql/*/bin or $PATH)")
}

// start makes and starts a cluster.
func start() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, cred, err := ownedTempDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir}
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := chown(pwfile, cred); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", User,
		"--pwfile", pwfile, "--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	asUser(initdb, cred)
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	os.Remove(pwfile)
	var lastErr error
	for range 5 {
		if lastErr = c.serve(cred); lastErr == nil {
			return c, nil
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

// serve starts the server on a free port and waits until it answers.
func (c *Cluster) serve(cred *credential) error {
	if c.port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		c.port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), "-D", filepath.Join(c.dir, "data"),
		"-p", strconv.Itoa(c.port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=400", "-c", "shared_buffers=32MB", "-c", "log_min_messages=fatal")
	cmd.Dir = c.dir
	logf, err := os.Create(filepath.Join(c.dir, "log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	asUser(cmd, cred)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
			c.port = 0
			return fmt.Errorf("postgres exited at start:\n%s", log)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			c.cmd, c.done = cmd, done
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-done
	return errors.New("postgres did not answer within 30 s")
}

// Stop stops the server (a fast shutdown); its data stays.
func (c *Cluster) Stop() {
	if c.cmd == nil {
		return
	}
	c.cmd.Process.Signal(interrupt)
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
	c.cmd = nil
}

// Start starts a stopped server again, on the same port.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	cred, err := unprivileged()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.serve(cred); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

func (c *Cluster) remove() {
	c.Stop()
	os.RemoveAll(c.dir)
}
