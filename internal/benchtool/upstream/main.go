// Command upstream is the remote server the HTTP benchmarks call: the
// official Go SDK's Streamable HTTP handler serving the definitions file
// benchtool writes (the same file sdkserver serves over stdio). Every tool
// answers with its "text" argument.
//
//	upstream DEFINITIONS.json
//
// /mcp is a stateful server (the 2025-11-25 session generation); /stateless
// is the same server with StreamableHTTPOptions.Stateless, which the SDK
// requires for 2026-07-28 requests. It prints "upstream listening on
// http://127.0.0.1:PORT" to stderr when ready and serves until SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type config struct {
	Instructions string      `json:"instructions"`
	Tools        []*mcp.Tool `json:"tools"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: upstream DEFINITIONS.json")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fatal(err)
	}
	var cfg config
	if err := json.Unmarshal(b, &cfg); err != nil {
		fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1.0.0"}, &mcp.ServerOptions{Instructions: cfg.Instructions})
	for _, t := range cfg.Tools {
		s.AddTool(t, echo)
	}
	get := func(*http.Request) *mcp.Server { return s }
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(get, nil))
	mux.Handle("/stateless", mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	srv := &http.Server{Handler: mux}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(os.Stderr, "upstream listening on http://%s\n", l.Addr())
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		fatal(err)
	}
}

func echo(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &args)
	if args.Text == "" {
		args.Text = "ok"
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "upstream:", err)
	os.Exit(1)
}
