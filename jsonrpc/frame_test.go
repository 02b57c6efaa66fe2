package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// readAll reads frames until io.EOF, recording ErrFrameTooLarge as nil.
func readAll(t *testing.T, r *Reader) []*string {
	t.Helper()
	var out []*string
	for range 1000 {
		f, err := r.Next()
		switch {
		case err == io.EOF:
			return out
		case errors.Is(err, ErrFrameTooLarge):
			out = append(out, nil)
		case err != nil:
			t.Fatalf("Next: %v", err)
		default:
			s := string(f)
			out = append(out, &s)
		}
	}
	t.Fatal("Next never returned io.EOF")
	return nil
}

func show(frames []*string) string {
	var parts []string
	for _, f := range frames {
		if f == nil {
			parts = append(parts, "<too large>")
		} else {
			parts = append(parts, fmt.Sprintf("%q", *f))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

var chunkings = map[string]func(io.Reader) io.Reader{
	"whole":    func(r io.Reader) io.Reader { return r },
	"one-byte": iotest.OneByteReader,
	"half":     iotest.HalfReader,
	"data-err": iotest.DataErrReader,
}

func TestReaderVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadReaderVectors(t) {
		for _, bufSize := range []int{16, 17, readBufSize} {
			for cname, chunk := range chunkings {
				r := newReaderSize(chunk(strings.NewReader(v.Input)), v.MaxFrame, bufSize)
				got := readAll(t, r)
				if show(got) != show(v.Frames) {
					t.Errorf("%s (buffer %d, %s): got %s, want %s", v.Name, bufSize, cname, show(got), show(v.Frames))
				}
			}
		}
	}
}

func TestReaderReturnsCopies(t *testing.T) {
	t.Parallel()
	r := newReaderSize(strings.NewReader("aaaa\nbbbb\n"+strings.Repeat("c", 40)+"\ndddd\n"), 0, 16)
	var frames [][]byte
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
	want := []string{"aaaa", "bbbb", strings.Repeat("c", 40), "dddd"}
	for i, f := range frames {
		if string(f) != want[i] {
			t.Errorf("frame %d = %q after later reads, want %q", i, f, want[i])
		}
	}
}

// lineGen yields n bytes of 'a' without a newline, then tail.
type lineGen struct {
	n    int64
	read int64
	tail *strings.Reader
}

var aBlock = bytes.Repeat([]byte("a"), 256<<10)

func (g *lineGen) Read(p []byte) (int, error) {
	if left := g.n - g.read; left > 0 {
		n := copy(p[:min(int64(len(p)), left)], aBlock)
		g.read += int64(n)
		return n, nil
	}
	return g.tail.Read(p)
}

func TestReaderOneGiBLineBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 2 GiB")
	}
	for _, max := range []int{1 << 20, DefaultMaxFrame} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			const huge = 1 << 30
			g := &lineGen{n: huge, tail: strings.NewReader("\n{\"jsonrpc\":\"2.0\",\"method\":\"after\"}\n")}
			r := NewReader(g, max)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := r.Next()
			if !errors.Is(err, ErrFrameTooLarge) {
				t.Fatalf("Next = %v, want ErrFrameTooLarge", err)
			}
			// The error comes as soon as the limit is passed, not at the
			// end of the line.
			if g.read > int64(max)+2*readBufSize+int64(len(aBlock)) {
				t.Errorf("read %d bytes before reporting the oversized line", g.read)
			}
			f, err := r.Next()
			if err != nil || string(f) != `{"jsonrpc":"2.0","method":"after"}` {
				t.Fatalf("Next after oversized line = %q, %v", f, err)
			}
			if g.read != huge {
				t.Errorf("generator read %d bytes, want %d", g.read, huge)
			}
			runtime.ReadMemStats(&after)
			// Allocated in all: the bufio buffer, the gathering buffer up to
			// max+2 with its doublings, the frame, the error.
			if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(2*max+4*readBufSize+(1<<20)); got > limit {
				t.Errorf("allocated %d bytes for a 1 GiB line with max %d (limit %d)", got, max, limit)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("final Next = %v, want io.EOF", err)
			}
		})
	}
}

func TestReaderOversizedLineAtEOF(t *testing.T) {
	t.Parallel()
	r := NewReader(&lineGen{n: 10 << 20, tail: strings.NewReader("")}, 1<<20)
	if _, err := r.Next(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Next = %v", err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next = %v, want io.EOF again", err)
	}
}

// failAfter returns data, then err on every later read.
type failAfter struct {
	data *strings.Reader
	err  error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.data.Len() > 0 {
		return f.data.Read(p)
	}
	return 0, f.err
}

func TestReaderErrorIsSticky(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	for _, input := range []string{"a\npartial", "a\n" + strings.Repeat("p", 100)} {
		src := &failAfter{data: strings.NewReader(input), err: boom}
		r := newReaderSize(src, 0, 16)
		if f, err := r.Next(); err != nil || string(f) != "a" {
			t.Fatalf("Next = %q, %v", f, err)
		}
		for range 2 {
			// The partial line is never returned as a frame.
			if f, err := r.Next(); err != boom {
				t.Fatalf("Next = %q, %v; want boom", f, err)
			}
		}
		// Even if the source recovers.
		src.data.Reset("b\n")
		if f, err := r.Next(); err != boom {
			t.Fatalf("Next after recovery = %q, %v; want boom", f, err)
		}
	}
}

// writeLog records every Write call.
type writeLog struct {
	mu    sync.Mutex
	calls []string
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, string(p))
	return len(p), nil
}

func TestWriterConcurrent(t *testing.T) {
	t.Parallel()
	var log writeLog
	w := NewWriter(&log)
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				// Vary sizes across the kept-buffer threshold.
				pad := strings.Repeat("x", (i*977)%(2*keepWriteBuf))
				f := fmt.Sprintf(`{"jsonrpc":"2.0","method":"m","params":{"g":%d,"i":%d,"p":%q}}`, g, i, pad)
				if err := w.Write([]byte(f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if len(log.calls) != writers*each {
		t.Fatalf("%d writes, want %d", len(log.calls), writers*each)
	}
	seen := map[string]bool{}
	for _, c := range log.calls {
		if strings.Count(c, "\n") != 1 || !strings.HasSuffix(c, "\n") {
			t.Fatal("a write is not exactly one frame")
		}
		m, err := Peek([]byte(c[:len(c)-1]))
		if err != nil || m.Kind != Notification {
			t.Fatalf("written frame: %v", err)
		}
		seen[string(m.Params[:20])] = true
	}
}

func TestWriterRefusesNewline(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, f := range []string{"{\n}", "{}\n", "\n"} {
		if err := w.Write([]byte(f)); err == nil {
			t.Errorf("Write(%q) succeeded", f)
		}
	}
	if err := w.Write([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if b.String() != "{\"a\":1}\n" {
		t.Errorf("wrote %q", b.String())
	}
}

// failWriter writes half of the first call, then fails.
type failWriter struct {
	b     bytes.Buffer
	calls int
}

func (f *failWriter) Write(p []byte) (int, error) {
	f.calls++
	f.b.Write(p[:len(p)/2])
	return len(p) / 2, io.ErrShortWrite
}

func TestWriterErrorIsSticky(t *testing.T) {
	t.Parallel()
	fw := &failWriter{}
	w := NewWriter(fw)
	if err := w.Write([]byte(`{"jsonrpc":"2.0","method":"a"}`)); err != io.ErrShortWrite {
		t.Fatalf("Write = %v", err)
	}
	if err := w.Write([]byte(`{"jsonrpc":"2.0","method":"b"}`)); err != io.ErrShortWrite {
		t.Fatalf("second Write = %v", err)
	}
	if fw.calls != 1 {
		t.Errorf("%d writes reached the stream after a failure", fw.calls)
	}
}

func TestWriterReaderRoundTrip(t *testing.T) {
	t.Parallel()
	frames := []string{
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{ "a" : "\u00e9" }}`,
		` {"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}} `,
		strings.Repeat(" ", 3) + `[1,2]`,
		`x` + strings.Repeat("y", 200<<10),
	}
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, f := range frames {
		if err := w.Write([]byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	r := NewReader(&b, 0)
	for i, want := range frames {
		got, err := r.Next()
		if err != nil || string(got) != want {
			t.Fatalf("frame %d: %.40q, %v", i, got, err)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
}
