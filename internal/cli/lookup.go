package cli

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"

	"github.com/mcpseal/mcpseal/lookup"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/tlog"
)

func init() { register(newLookupCmd) }

func newLookupCmd(e *env) *cobra.Command {
	var logDir, keyFile string
	var port int
	cmd := &cobra.Command{
		Use:   "lookup [--log DIR --key FILE] [--http PORT]",
		Short: "Run a read-only MCP server that answers from the public log and the pin store",
		Long: `Run mcpseal's lookup MCP server on stdio: read-only tools that tell an agent
whether a public server's contract changed (from the log in DIR, verified
with the key in FILE), which servers are pinned here and which changes wait
for review, the labels of a pending change, and how to protect a server in
each client. Tool output never carries a server's own text: names reduced
to a safe character set, dates, counts, digests and label codes.

With --http PORT it serves the two public tools over Streamable HTTP on
127.0.0.1:PORT/mcp instead, and never this machine's pins.

Add it to a client like any stdio server:

    {"mcpServers": {"mcpseal": {"command": "mcpseal", "args": ["lookup"]}}}`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (logDir == "") != (keyFile == "") {
				return &usageError{errors.New("--log and --key go together")}
			}
			if cmd.Flags().Changed("http") && (port < 1 || port > 65535) {
				return &usageError{errors.New("--http takes a port from 1 to 65535")}
			}
			return runLookup(e, logDir, keyFile, port)
		},
	}
	cmd.Flags().StringVar(&logDir, "log", "", "a transparency log folder to answer from")
	cmd.Flags().StringVar(&keyFile, "key", "", "the log's verifier key file")
	cmd.Flags().IntVar(&port, "http", 0, "serve the public tools over HTTP on 127.0.0.1:PORT")
	return cmd
}

func runLookup(e *env, logDir, keyFile string, port int) error {
	home, err := mcpsealHome(e)
	if err != nil {
		return err
	}
	cfg := lookup.Config{Version: "dev"}
	if logDir != "" {
		key, err := tlog.ReadVerifierFile(keyFile)
		if err != nil {
			return fmt.Errorf("reading the verifier key: %w", err)
		}
		src := &logSource{dir: logDir, key: key, seen: tlog.SeenDir(home)}
		if _, err := src.get(); err != nil {
			return withHint(fmt.Errorf("the log does not verify: %w", err), "run 'mcpseal log verify %s --key %s' for details", logDir, keyFile)
		}
		cfg.Log = src.get
	}
	if port == 0 {
		st, err := pin.Open(home)
		if err != nil {
			return fmt.Errorf("opening the pin store: %w", err)
		}
		cfg.Pins = st
		return lookup.New(cfg).ServeStdio(e.stdin, e.stdout)
	}
	ln, err := lookup.ListenLoopback(port)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "mcpseal: lookup serving the public tools on http://%s/mcp\n", ln.Addr())
	srv := &http.Server{Handler: lookup.New(cfg).HTTPHandler(ln.Addr().(*net.TCPAddr).Port),
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, MaxHeaderBytes: 16 << 10}
	return srv.Serve(ln)
}

// logSource verifies the log once, and again whenever its checkpoint
// changes; a log that stops verifying answers nothing.
type logSource struct {
	dir  string
	key  note.Verifier
	seen tlog.SeenStore

	mu   sync.Mutex
	note []byte
	cur  *lookup.PublicLog
}

func (s *logSource) get() (*lookup.PublicLog, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := tlog.OpenDir(s.dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	msg, err := d.ReadFile(tlog.CheckpointFile, tlog.MaxCheckpointNote)
	if err != nil {
		return nil, err
	}
	if s.cur != nil && bytes.Equal(msg, s.note) {
		return s.cur, nil
	}
	s.cur = nil
	v, err := tlog.Verify(d, tlog.VerifyOptions{Key: s.key, Seen: s.seen})
	if err != nil {
		return nil, err
	}
	live, err := tlog.ReadLiveness(d)
	if err != nil {
		return nil, err
	}
	s.note, s.cur = v.Checkpoint.Note, &lookup.PublicLog{Log: v, Live: live}
	return s.cur, nil
}
