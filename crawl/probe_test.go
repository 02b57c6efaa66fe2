package crawl

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pipeProcess is a server run in-process: handle answers each request
// line with zero or more lines.
type pipeProcess struct {
	inW  *io.PipeWriter
	outR *io.PipeReader
	done chan struct{}
}

func startPipe(handle func(method string, params json.RawMessage, id json.RawMessage) []string) *pipeProcess {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pipeProcess{inW: inW, outR: outR, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer outW.Close()
		sc := bufio.NewScanner(inR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
				continue
			}
			for _, l := range handle(m.Method, m.Params, m.ID) {
				if _, err := io.WriteString(outW, l+"\n"); err != nil {
					return
				}
			}
		}
	}()
	return p
}

func (p *pipeProcess) Stdin() io.WriteCloser { return p.inW }
func (p *pipeProcess) Stdout() io.Reader     { return p.outR }
func (p *pipeProcess) StderrTail() []byte    { return nil }
func (p *pipeProcess) Stop()                 { p.inW.Close(); p.outR.Close(); <-p.done }

func result(id json.RawMessage, r string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, r)
}

func probeWith(t *testing.T, handle func(string, json.RawMessage, json.RawMessage) []string) (*ProbeResult, error) {
	t.Helper()
	p := startPipe(handle)
	defer p.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return Probe(ctx, p)
}

const initOK = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"prompts":{}},"instructions":"hi"}`

func TestProbeReadsEveryPageAndNeverCallsATool(t *testing.T) {
	called := false
	res, err := probeWith(t, func(m string, params, id json.RawMessage) []string {
		switch m {
		case "initialize":
			return []string{"starting up...", result(id, initOK)}
		case "tools/list":
			if strings.Contains(string(params), "p2") {
				return []string{`{"jsonrpc":"2.0","id":99,"method":"roots/list"}`, result(id, `{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}`)}
			}
			return []string{result(id, `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"p2"}`)}
		case "prompts/list":
			return []string{result(id, `{"prompts":[{"name":"p"}]}`)}
		case "tools/call":
			called = true
		}
		return []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, id)}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contract.Defs["tools"]) != 2 || len(res.Contract.Defs["prompts"]) != 1 || *res.Contract.Instructions != "hi" || called {
		t.Fatalf("%+v called=%v", res.Contract, called)
	}
}

func TestProbeCursorLoopIsRefused(t *testing.T) {
	_, err := probeWith(t, func(m string, params, id json.RawMessage) []string {
		if m == "initialize" {
			return []string{result(id, initOK)}
		}
		return []string{result(id, `{"tools":[],"nextCursor":"same"}`)}
	})
	if pe, ok := err.(*ProbeError); !ok || pe.Reason != "paging" {
		t.Fatalf("err %v", err)
	}
}

func TestProbeSilentServerTimesOut(t *testing.T) {
	_, err := probeWith(t, func(string, json.RawMessage, json.RawMessage) []string { return nil })
	if pe, ok := err.(*ProbeError); !ok || pe.Reason != "timeout" {
		t.Fatalf("err %v", err)
	}
}

func TestProbeNoiseFloodIsNotMCP(t *testing.T) {
	_, err := probeWith(t, func(string, json.RawMessage, json.RawMessage) []string {
		return strings.Split(strings.Repeat("log line\n", probeMaxNoise+5), "\n")
	})
	if pe, ok := err.(*ProbeError); !ok || pe.Reason != "not-mcp" {
		t.Fatalf("err %v", err)
	}
}

func TestCredentialFailureIsClassified(t *testing.T) {
	for tail, want := range map[string]string{
		"Error: GITHUB_TOKEN environment variable is not set": "needs-credentials",
		"Missing API key":                          "needs-credentials",
		"SyntaxError: Invalid or unexpected token": "exited",
	} {
		if got := classify(probeFail("exited"), []byte(tail)); got != want {
			t.Errorf("%q: %s, want %s", tail, got, want)
		}
	}
}

func tgz(t *testing.T, hdrs []*tar.Header) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, h := range hdrs {
		tw.WriteHeader(h)
		if h.Typeflag == tar.TypeReg && h.Size < 1<<20 { // a bomb's header alone
			tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func TestTarballPathTraversalAndLinksAreRefused(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pkg")
	err := unpack(tgz(t, []*tar.Header{
		{Name: "package/package.json", Typeflag: tar.TypeReg, Size: 2, Mode: 0o755},
		{Name: "package/../../escape.txt", Typeflag: tar.TypeReg, Size: 1},
		{Name: "/abs.txt", Typeflag: tar.TypeReg, Size: 1},
		{Name: "package/link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		{Name: "package/hard", Typeflag: tar.TypeLink, Linkname: "package/package.json"},
		{Name: "package/dev", Typeflag: tar.TypeChar},
	}), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(root, "escape.txt"), filepath.Join(dir, "link"), filepath.Join(dir, "hard"), filepath.Join(dir, "dev")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "package.json"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("package.json: %v %v", err, fi)
	}
}

func TestTarballBombIsBounded(t *testing.T) {
	err := unpack(tgz(t, []*tar.Header{{Name: "package/big", Typeflag: tar.TypeReg, Size: maxUnpacked + 1}}), filepath.Join(t.TempDir(), "pkg"))
	if err == nil {
		t.Fatal("unpacked more than the limit")
	}
}
