package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/mcpseal/mcpseal/canon"
)

// This file is the command provider: a local program, run without a
// shell, that reads the request on stdin and writes one decision on
// stdout:
//
//	{"v": 1, "decision": "allow", "reason": "known-server", "ttl_seconds": 300}
//
// reason (a code of [a-z0-9.-]) and ttl_seconds (0 to 86400; how long the
// session may reuse the decision, 0 or absent: this question only) are
// optional. A non-zero exit status, a run past the timeout (the process
// group is killed), more than 64 KiB of output, or output that is not
// exactly such an object is a refusal (provider-failed). The program gets
// an empty environment except the variables the policy names in "env".
// Its stderr is discarded.

// maxCommandOutput bounds a command provider's stdout: a decision is a
// line of JSON.
const maxCommandOutput = 64 << 10

// maxCommandTTL bounds how long a command's decision may be cached.
const maxCommandTTL = 86400

// commandWaitDelay bounds how long mcpseal waits for the program's pipes
// to close after it was killed (a grandchild may hold them open).
const commandWaitDelay = time.Second

type commandProvider struct {
	cfg    *providerConfig
	getenv func(string) string
}

func (p *commandProvider) local() bool { return true }

type commandAnswer struct {
	V          int      `json:"v"`
	Decision   Decision `json:"decision"`
	Reason     string   `json:"reason,omitempty"`
	TTLSeconds int64    `json:"ttl_seconds,omitempty"`
}

func (p *commandProvider) decide(ctx context.Context, req *Request, now time.Time) (answer, error) {
	body, _, err := req.body()
	if err != nil {
		return answer{}, failed("the request could not be encoded")
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.cfg.command[0], p.cfg.command[1:]...)
	cmd.Env = []string{}
	for _, name := range p.cfg.env {
		if v := p.getenv(name); v != "" {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	cmd.Stdin = bytes.NewReader(body)
	out := &capped{limit: maxCommandOutput}
	cmd.Stdout = out
	cmd.Stderr = io.Discard
	cmd.WaitDelay = commandWaitDelay
	killGroup(cmd)
	runErr := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return answer{}, failed(fmt.Sprintf("the command did not answer within %s and was killed", p.cfg.timeout))
	case out.over:
		return answer{}, failed(fmt.Sprintf("the command wrote more than %d bytes", maxCommandOutput))
	case runErr != nil:
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			return answer{}, failed(fmt.Sprintf("the command exited with status %d", ee.ExitCode()))
		}
		return answer{}, failed("the command could not be run")
	}
	return parseCommandAnswer(out.buf.Bytes(), now)
}

// parseCommandAnswer reads a command provider's stdout.
func parseCommandAnswer(out []byte, now time.Time) (answer, error) {
	garbage := failed("the command's output is not a decision")
	c, err := canon.Transform(out)
	if err != nil {
		return answer{}, garbage
	}
	if _, err := exactMembers(c, "v", "decision", "reason", "ttl_seconds"); err != nil {
		return answer{}, garbage
	}
	var ca commandAnswer
	if err := json.Unmarshal(c, &ca); err != nil || ca.V != 1 || !ca.Decision.valid() {
		return answer{}, garbage
	}
	if ca.Reason != "" && !isCode(ca.Reason) || ca.TTLSeconds < 0 || ca.TTLSeconds > maxCommandTTL {
		return answer{}, garbage
	}
	a := answer{decision: ca.Decision, reason: ca.Reason}
	if ca.TTLSeconds > 0 {
		a.expires = now.Add(time.Duration(ca.TTLSeconds) * time.Second)
	}
	return a, nil
}

// capped is a writer that keeps at most limit bytes and then fails, which
// closes the pipe on the program.
type capped struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

var errTooMuchOutput = errors.New("too much output")

func (c *capped) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > c.limit {
		c.over = true
		return 0, errTooMuchOutput
	}
	return c.buf.Write(p)
}
