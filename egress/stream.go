package egress

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/mcpseal/mcpseal/jsonrpc"
)

// Resumption bounds: how often a broken stream is resumed with
// Last-Event-ID, and the longest wait a server's retry field may ask for.
const (
	maxResumes    = 3
	maxRetryDelay = 5 * time.Second
	defaultRetry  = 500 * time.Millisecond
	maxGETFails   = 3
)

// readStream reads the event stream that answers request m, delivering
// every message on it, until the answer to m. A stream that breaks before
// the answer is resumed with a GET and Last-Event-ID (legacy sessions from
// 2025-11-25 on), at most maxResumes times. Once the answer is in, the rest
// of the stream is read by finishBody, which then closes it and calls
// cancel (so the connection can serve the next request); readStream then
// reports true, and the caller must close neither.
func (u *Upstream) readStream(ctx context.Context, cancel context.CancelFunc, body io.ReadCloser, m jsonrpc.Message, f Failure) (handed bool) {
	budget := u.opts.MaxStream
	for resumes := 0; ; resumes++ {
		sr := NewSSEReader(body, u.opts.MaxMessage, budget)
		answered, err := u.drain(sr, m)
		budget -= sr.read
		if answered {
			finishBody(body, cancel)
			return true
		}
		body.Close()
		switch {
		case errors.Is(err, ErrEventTooLarge):
			u.fail(m.ID, u.readFailure(f, err, int64(u.opts.MaxMessage)))
			return
		case errors.Is(err, ErrStreamTooLarge):
			u.fail(m.ID, u.readFailure(f, err, u.opts.MaxStream))
			return
		case ctx.Err() != nil:
			u.fail(m.ID, withReason(f, ReasonTimeout))
			return
		}
		if sr.LastID() == "" || MetaVersion(m.Params) != "" || resumes >= maxResumes {
			u.fail(m.ID, withReason(f, ReasonUnreachable))
			return
		}
		if !sleep(ctx, retryDelay(sr.retry)) {
			u.fail(m.ID, withReason(f, ReasonTimeout))
			return
		}
		resp, err := u.get(ctx, sr.LastID())
		if err != nil {
			u.fail(m.ID, u.transportFailure(f, err))
			return
		}
		if ok, fail := u.streamAnswer(resp, f); !ok {
			resp.Body.Close()
			u.fail(m.ID, fail)
			return
		}
		body = resp.Body
	}
}

// drain delivers the messages of one stream; it reports whether the
// answer to m was among them.
func (u *Upstream) drain(sr *SSEReader, m jsonrpc.Message) (bool, error) {
	for {
		ev, err := sr.Next()
		if err != nil {
			return false, err
		}
		if ev.Retry > 0 {
			sr.retry = ev.Retry
		}
		if ev.Type != "message" || len(bytes.TrimSpace(ev.Data)) == 0 {
			continue // a priming event, or a type MCP does not use
		}
		if _, err := jsonrpc.Peek(ev.Data); err != nil {
			u.report(Failure{Reason: ReasonInvalid, Method: m.Method})
			continue
		}
		u.receive(ev.Data, m)
		if m.ID != nil && u.answered(ev.Data, m.ID) {
			return true, nil
		}
	}
}

// get opens a GET stream, resuming after lastID when it is set.
func (u *Upstream) get(ctx context.Context, lastID string) (*http.Response, error) {
	req, err := u.newRequest(ctx, http.MethodGet, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	u.mu.Lock()
	if u.sessionID != "" {
		req.Header.Set(sessionHeader, u.sessionID)
	}
	if u.version != "" {
		req.Header.Set(versionHeader, u.version)
	}
	u.mu.Unlock()
	if lastID != "" {
		req.Header.Set(lastIDHeader, lastID)
	}
	return u.do(req)
}

// streamAnswer checks that resp opens an event stream.
func (u *Upstream) streamAnswer(resp *http.Response, f Failure) (bool, Failure) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode/100 == 3:
		f.Reason, f.Status = ReasonRedirect, resp.StatusCode
	case resp.StatusCode != http.StatusOK:
		f.Reason, f.Status = ReasonStatus, resp.StatusCode
		if u.expired(resp) {
			f.Reason = ReasonExpired
		}
	case ct != "text/event-stream":
		f.Reason = ReasonContentType
	default:
		return true, f
	}
	return false, f
}

// startGET opens the legacy session's GET stream for the server's own
// requests and notifications, once, after the session is initialized. A
// server that offers none answers 405. The stream is reopened (resuming
// with Last-Event-ID) when it ends, until it fails maxGETFails times in a
// row without delivering anything.
func (u *Upstream) startGET() {
	u.mu.Lock()
	start := !u.getOnce && u.sessionID != "" && !u.closing
	u.getOnce = true
	u.mu.Unlock()
	if !start {
		return
	}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		lastID, fails := "", 0
		for u.ctx.Err() == nil && fails < maxGETFails {
			resp, err := u.get(u.ctx, lastID)
			if err != nil {
				if u.ctx.Err() == nil {
					u.report(u.transportFailure(Failure{Method: "GET"}, err))
				}
				fails++
				sleep(u.ctx, defaultRetry)
				continue
			}
			if resp.StatusCode == http.StatusMethodNotAllowed {
				resp.Body.Close()
				return
			}
			if ok, f := u.streamAnswer(resp, Failure{Method: "GET"}); !ok {
				resp.Body.Close()
				u.report(f)
				if f.Reason == ReasonExpired {
					return
				}
				fails++
				sleep(u.ctx, defaultRetry)
				continue
			}
			sr := NewSSEReader(resp.Body, u.opts.MaxMessage, u.opts.MaxStream)
			_, err = u.drain(sr, jsonrpc.Message{Method: "GET"})
			resp.Body.Close()
			if errors.Is(err, ErrEventTooLarge) || errors.Is(err, ErrStreamTooLarge) {
				u.report(u.readFailure(Failure{Method: "GET"}, err, u.opts.MaxStream))
			}
			if sr.read > 0 {
				fails = 0
			} else {
				fails++
			}
			lastID = sr.LastID()
			sleep(u.ctx, retryDelay(sr.retry))
		}
	}()
}

// Draining after the answer: the server ends the stream right after it,
// and reading to the end lets the connection be reused.
const (
	maxDrain     = 64 << 10
	drainTimeout = time.Second
)

// finishBody reads what is left of an answered stream, bounded in bytes
// and time, then closes it and calls done, without holding up the caller.
func finishBody(body io.ReadCloser, done func()) {
	go func() {
		t := time.AfterFunc(drainTimeout, func() { body.Close() })
		_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
		t.Stop()
		body.Close()
		done()
	}()
}

func retryDelay(ms int) time.Duration {
	if ms <= 0 {
		return defaultRetry
	}
	return min(time.Duration(ms)*time.Millisecond, maxRetryDelay)
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
