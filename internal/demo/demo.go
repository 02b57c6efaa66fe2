package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/stdio"
)

// Config is what the demo needs from the command.
type Config struct {
	// Self is the path of the mcpseal binary, which also serves the demo
	// server (mcpseal demo-server).
	Self string
	Out  io.Writer
	// Report receives the gate's drift report (the labelled diff).
	Report func(gate.DriftReport)
	// Verified receives first pins.
	Verified func(profile string, outcome pin.Outcome)
}

// sessionTimeout bounds one demo session; both take milliseconds.
const sessionTimeout = 10 * time.Second

// Run runs the demo in a temporary folder that it removes afterwards.
// It returns an error when the demo did not show what it should: the
// first session pinned and the second blocked.
func Run(cfg Config) error {
	dir, err := os.MkdirTemp("", "mcpseal-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	store, err := pin.Open(dir)
	if err != nil {
		return err
	}
	id := pin.IdentityForName("weather-demo")
	w := cfg.Out
	fmt.Fprintf(w, "mcpseal demo: a harmless bundled server, two sessions, a temporary folder (%s), no network, no tool calls\n\n", dir)

	fmt.Fprintf(w, "== Session 1: the server lists one tool, get_weather. mcpseal pins it.\n")
	st, reply, err := session(cfg, store, id, 1)
	if err != nil {
		return err
	}
	if st.Closed && st.Code != gate.CodeServerExited {
		return fmt.Errorf("demo: session 1 was closed (%s); expected a pin", st.Reason)
	}
	fmt.Fprintf(w, "   client saw: %s\n\n", reply)

	fmt.Fprintf(w, "== Session 2: the same server now asks the model for the conversation's notes and credentials.\n")
	st, reply, err = session(cfg, store, id, 2)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   client saw: %s\n\n", reply)
	if !st.Closed || st.Code != gate.CodeBlocked {
		return errors.New("demo: session 2 was not blocked")
	}
	fmt.Fprintf(w, "The second session was blocked before the client saw the changed tool. In real use,\n")
	fmt.Fprintf(w, "'mcpseal review %s' shows this diff and 'mcpseal approve %s' accepts it.\n", id.ID, id.ID)
	fmt.Fprintf(w, "The temporary folder is removed; your real pins were not touched.\n")
	return nil
}

// session runs one session of the demo server behind the gate, with a
// small client that initializes and lists tools. It returns how the gate
// ended and what the client saw.
func session(cfg Config, store *pin.Store, id pin.Identity, variant int) (gate.Status, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	g := gate.New(gate.Config{
		Identity: id,
		Pins:     store,
		IDPrefix: gate.NewIDPrefix(),
		OnDrift:  cfg.Report,
		OnVerified: func(profile string, outcome pin.Outcome, _ *contract.Contract) {
			if cfg.Verified != nil {
				cfg.Verified(profile, outcome)
			}
		},
	})
	clientR, proxyW := io.Pipe() // mcpseal's stdout, read by the client
	proxyR, clientW := io.Pipe() // mcpseal's stdin, written by the client
	type result struct {
		res stdio.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := stdio.Run(ctx, stdio.Config{
			Argv:      []string{cfg.Self, "demo-server", "--variant", fmt.Sprint(variant)},
			Gate:      g,
			ClientIn:  proxyR,
			ClientOut: proxyW,
			Stderr:    io.Discard,
			Logger:    slog.New(slog.DiscardHandler),
		})
		proxyW.Close()
		done <- result{res, err}
	}()
	reply, cerr := demoClient(clientR, clientW)
	clientW.Close()
	go io.Copy(io.Discard, clientR) // drain whatever is left
	r := <-done
	if r.err != nil {
		return gate.Status{}, "", r.err
	}
	if cerr != nil {
		return gate.Status{}, "", cerr
	}
	return r.res.Gate, reply, nil
}

// demoClient initializes, lists tools and describes what it saw.
func demoClient(r io.Reader, w io.Writer) (string, error) {
	br := bufio.NewReader(r)
	send := func(s string) error {
		_, err := io.WriteString(w, s+"\n")
		return err
	}
	recv := func() (map[string]json.RawMessage, error) {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("demo client: %w", err)
		}
		var m map[string]json.RawMessage
		return m, json.Unmarshal(line, &m)
	}
	if err := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo-client","version":"1.0.0"}}}`); err != nil {
		return "", err
	}
	m, err := recv()
	if err != nil {
		return "", err
	}
	if e, ok := m["error"]; ok {
		return describeError(e), nil
	}
	if err := send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return "", err
	}
	if err := send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`); err != nil {
		return "", err
	}
	if m, err = recv(); err != nil {
		return "", err
	}
	if e, ok := m["error"]; ok {
		return describeError(e), nil
	}
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(m["result"], &res); err != nil {
		return "", err
	}
	names := ""
	for _, t := range res.Tools {
		names += " " + t.Name
	}
	return fmt.Sprintf("%d tool(s):%s", len(res.Tools), names), nil
}

func describeError(raw json.RawMessage) string {
	var e struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return "a malformed error"
	}
	return fmt.Sprintf("JSON-RPC error %d, data %s", e.Code, e.Data)
}
