// Command sdkserver is an honest MCP server built on the official Go SDK
// (mcp.NewServer, AddTool, mcp.StdioTransport). Its definitions come from
// the JSON file named by its first argument, read once at start, so a test
// makes drift between sessions by rewriting the file:
//
//	{
//	  "instructions": "Use echo to repeat text.",
//	  "tools": [{"name": "echo", "description": "Repeats text.",
//	             "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}],
//	  "removeTools": ["old"],
//	  "prompts": [{"name": "greet", "description": "Says hello."}],
//	  "resources": [{"uri": "file:///readme.txt", "name": "readme"}],
//	  "resourceTemplates": [{"uriTemplate": "file:///notes/{name}", "name": "note"}],
//	  "mutateOnCall": {"tool": "mutate", "addTools": [...], "removeTools": ["echo"]}
//	}
//
// Every tool is registered with Server.AddTool; removeTools are then taken
// away with Server.RemoveTools. A call of mutateOnCall.tool changes the
// tool set mid-session the same way (the SDK then sends
// notifications/tools/list_changed). Every tool answers with the text of
// its "text" argument, or "ok".
//
// Exit status: 0 when the client closes stdin, 2 on a bad file.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// config is the definitions file.
type config struct {
	Name              string                  `json:"name"`
	Version           string                  `json:"version"`
	Instructions      string                  `json:"instructions"`
	Tools             []*mcp.Tool             `json:"tools"`
	RemoveTools       []string                `json:"removeTools"`
	Prompts           []*mcp.Prompt           `json:"prompts"`
	Resources         []*mcp.Resource         `json:"resources"`
	ResourceTemplates []*mcp.ResourceTemplate `json:"resourceTemplates"`
	MutateOnCall      *mutation               `json:"mutateOnCall"`
}

type mutation struct {
	Tool        string      `json:"tool"`
	AddTools    []*mcp.Tool `json:"addTools"`
	RemoveTools []string    `json:"removeTools"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sdkserver DEFINITIONS.json")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "sdkserver:", err)
		os.Exit(2)
	}
}

func run(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if cfg.Name == "" {
		cfg.Name = "sdkserver"
	}
	if cfg.Version == "" {
		cfg.Version = "1.0.0"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Version: cfg.Version}, &mcp.ServerOptions{Instructions: cfg.Instructions})
	if err := addTools(s, cfg.Tools, cfg.MutateOnCall); err != nil {
		return err
	}
	s.RemoveTools(cfg.RemoveTools...)
	for _, p := range cfg.Prompts {
		s.AddPrompt(p, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
		})
	}
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello"}}}, nil
	}
	for _, r := range cfg.Resources {
		s.AddResource(r, read)
	}
	for _, t := range cfg.ResourceTemplates {
		s.AddResourceTemplate(t, read)
	}
	err = s.Run(context.Background(), &mcp.StdioTransport{})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

func addTools(s *mcp.Server, tools []*mcp.Tool, m *mutation) error {
	for _, t := range tools {
		// AddTool panics on a schema that is not an object schema; say so
		// plainly instead.
		schema, _ := t.InputSchema.(map[string]any)
		if schema == nil || schema["type"] != "object" {
			return fmt.Errorf("tool %q: inputSchema must be an object schema with type \"object\"", t.Name)
		}
		s.AddTool(t, handler(s, m))
	}
	return nil
}

func handler(s *mcp.Server, m *mutation) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if m != nil && req.Params.Name == m.Tool {
			if err := addTools(s, m.AddTools, nil); err != nil {
				return nil, err
			}
			s.RemoveTools(m.RemoveTools...)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "mutated"}}}, nil
		}
		var args struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &args)
		text := args.Text
		if text == "" {
			text = "ok"
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
}
