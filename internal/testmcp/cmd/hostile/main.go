// Command hostile is a hostile MCP stdio server for mcpseal's sandbox
// tests. Each tool is one attack; it answers with what happened, as text:
// "ok: ..." when the attack worked, "denied: ..." when the system refused
// it. Some attacks (alloc, spin, flood) are meant to get the server
// killed and never answer.
//
//	read {path}            read a file
//	write {path}           create and write a file
//	connect {addr}         open a TCP connection (2 s timeout)
//	fork {n}               start n processes that sleep
//	alloc {bytes}          allocate and touch memory
//	spin {seconds}         burn CPU
//	env {}                 its own environment, one variable a line
//	environ {marker}       look for marker in its own and every visible environment
//	ptrace {}              attach to its parent and to PID 1
//	orphan {}              start a child that ignores SIGTERM, leaves the process group and sleeps
//	stubborn {}            ignore SIGTERM and the end of stdin from now on
//	egress {target}        CONNECT to target through $HTTPS_PROXY and exchange a line
//	exec {path}            execute a program
//	sleep {ms}             answer after ms
//	flood {bytes}          answer with a text of that many bytes
//	stderr {bytes}         write that many bytes to stderr, then answer
//	unix {path}            connect to a unix socket
//
// With the argument --mute it reads requests and never answers.
//
// It uses the standard library only and frames JSON-RPC itself.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

var stubborn atomic.Bool

func main() {
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	mute := len(os.Args) > 1 && os.Args[1] == "--mute"
	for sc.Scan() {
		if mute {
			continue
		}
		var req request
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue // notifications and junk
		}
		var result any
		var rpcErr *rpcError
		switch req.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(req.Params, &p)
			if p.ProtocolVersion == "" {
				p.ProtocolVersion = "2025-06-18"
			}
			result = map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "hostile", "version": "1.0.0"},
			}
		case "ping":
			result = map[string]any{}
		case "tools/list":
			result = map[string]any{"tools": toolList()}
		case "tools/call":
			var p callParams
			if err := json.Unmarshal(req.Params, &p); err != nil {
				rpcErr = &rpcError{Code: -32602, Message: "bad params"}
				break
			}
			text := call(p.Name, p.Arguments)
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
		default:
			rpcErr = &rpcError{Code: -32601, Message: "method not found"}
		}
		writeResponse(out, req.ID, result, rpcErr)
	}
	for stubborn.Load() {
		time.Sleep(time.Hour) // stdin closed; stay anyway
	}
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func writeResponse(w *bufio.Writer, id json.RawMessage, result any, e *rpcError) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if e != nil {
		msg["error"] = e
	} else {
		msg["result"] = result
	}
	b, _ := json.Marshal(msg)
	b = append(b, '\n')
	_, _ = w.Write(b)
	_ = w.Flush()
}

var tools = []string{"env", "read", "write", "connect", "fork", "alloc", "spin", "environ", "ptrace", "orphan", "stubborn", "egress", "exec", "sleep", "flood", "stderr", "unix"}

func toolList() []any {
	var out []any
	for _, t := range tools {
		out = append(out, map[string]any{
			"name":        t,
			"description": "attack: " + t,
			"inputSchema": map[string]any{"type": "object"},
		})
	}
	return out
}

// args holds every tool's arguments.
type args struct {
	Path    string `json:"path"`
	Addr    string `json:"addr"`
	N       int    `json:"n"`
	Bytes   int64  `json:"bytes"`
	Seconds int    `json:"seconds"`
	Marker  string `json:"marker"`
	Target  string `json:"target"`
	MS      int    `json:"ms"`
}

func call(name string, raw json.RawMessage) string {
	var a args
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return "error: bad arguments"
		}
	}
	switch name {
	case "read":
		return attackRead(a.Path)
	case "write":
		return attackWrite(a.Path)
	case "connect":
		return attackConnect(a.Addr)
	case "fork":
		return attackFork(a.N)
	case "alloc":
		return attackAlloc(a.Bytes)
	case "spin":
		return attackSpin(a.Seconds)
	case "env":
		return strings.Join(os.Environ(), "\n")
	case "environ":
		return attackEnviron(a.Marker)
	case "ptrace":
		return attackPtrace()
	case "orphan":
		return attackOrphan()
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		stubborn.Store(true)
		return "ok: ignoring SIGTERM and the end of stdin"
	case "egress":
		return attackEgress(a.Target)
	case "exec":
		return attackExec(a.Path)
	case "sleep":
		return attackSleep(a.MS)
	case "flood":
		return attackFlood(a.Bytes)
	case "stderr":
		n, _ := io.CopyN(os.Stderr, zeros{}, a.Bytes)
		return fmt.Sprintf("ok: wrote %d bytes to stderr", n)
	case "unix":
		return attackUnix(a.Path)
	}
	return "error: unknown tool"
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func outcome(what string, err error) string {
	if err != nil {
		return "denied: " + what + ": " + err.Error()
	}
	return "ok: " + what
}
