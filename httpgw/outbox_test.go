package httpgw

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// outboxFrame is frame i of writer g: about 10 KB, so that a 64 KiB pipe
// takes only part of some.
func outboxFrame(g, i int) []byte {
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"m","params":{"g":%d,"i":%d,"pad":"%s"}}`, g, i, strings.Repeat("x", 10000+i%7)))
}

// TestOutboxFramesStayWholeAndInOrder: frames held and flushed by many
// goroutines, and pushed for the outbox's goroutine, against a server
// that reads slowly (so that flushes find the pipe full, or take part of
// a frame), reach it whole, each line one frame, each writer's in order.
func TestOutboxFramesStayWholeAndInOrder(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o := newOutbox(w, slog.New(slog.DiscardHandler))
	go o.run()
	const writers, each = 4, 40
	var mu sync.Mutex // orders queueing per writer as the session's lock does
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				mu.Lock()
				if g == 0 {
					o.push(outboxFrame(g, i))
				} else {
					o.hold(outboxFrame(g, i))
				}
				mu.Unlock()
				o.flush()
			}
		}()
	}
	got := make(chan [][]byte, 1)
	go func() {
		var lines [][]byte
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			time.Sleep(time.Millisecond) // a slow server
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				lines = append(lines, line)
			}
			if err != nil {
				got <- lines
				return
			}
		}
	}()
	wg.Wait()
	o.close()
	lines := <-got
	if len(lines) != writers*each {
		t.Fatalf("%d lines, want %d", len(lines), writers*each)
	}
	next := make([]int, writers)
	for _, l := range lines {
		var g, i int
		if _, err := fmt.Sscanf(string(l), `{"jsonrpc":"2.0","method":"m","params":{"g":%d,"i":%d,`, &g, &i); err != nil {
			t.Fatalf("a line that is not a whole frame: %.80q", l)
		}
		if i != next[g] || !bytes.Equal(l, append(outboxFrame(g, i), '\n')) {
			t.Fatalf("writer %d: frame %d where %d was due, or not byte for byte", g, i, next[g])
		}
		next[g]++
	}
}

// TestOutboxFlushNeverWaits: a flush against a server that reads nothing
// returns; the outbox's goroutine writes the rest once it reads.
func TestOutboxFlushNeverWaits(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o := newOutbox(w, slog.New(slog.DiscardHandler))
	if o.try == nil {
		t.Skip("no nonblocking write on this platform: every frame is the goroutine's")
	}
	go o.run()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 { // 200 KB: three times a default pipe's buffer
			o.hold(outboxFrame(0, i))
			o.flush()
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("flush waited for the server")
	}
	o.close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n != 20 {
		t.Fatalf("%d frames reached the server, want 20", n)
	}
}
