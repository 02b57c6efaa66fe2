package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxFrame is the frame limit NewReader uses when given none.
const DefaultMaxFrame = 16 << 20 // why: same cap as go-sdk's stdio reader

// readBufSize is the Reader's buffer size.
// why: holds a typical MCP message whole, so the common frame costs one copy
// out of the buffer; a longer one is gathered in a buffer of its own.
const readBufSize = 64 << 10

// keepWriteBuf is the largest buffer a Writer keeps between writes.
// why: reusing it saves an allocation per ordinary message, without pinning
// the memory of the one 16 MiB result a session may carry.
const keepWriteBuf = 64 << 10

// ErrFrameTooLarge is returned by Reader.Next for a line longer than the
// limit. The Reader skips the rest of that line; the next call returns the
// frame after it.
var ErrFrameTooLarge = errors.New("jsonrpc: frame exceeds limit")

var errNewline = errors.New("jsonrpc: frame contains a newline")

// Reader splits a stream into newline-delimited frames.
type Reader struct {
	br      *bufio.Reader
	max     int
	discard bool  // in the middle of an oversized line: drop through "\n"
	err     error // sticky: io.EOF or the first read error
}

// NewReader returns a Reader that reads frames of at most maxFrame bytes
// from r. A maxFrame of zero or less means DefaultMaxFrame.
func NewReader(r io.Reader, maxFrame int) *Reader {
	return newReaderSize(r, maxFrame, readBufSize)
}

func newReaderSize(r io.Reader, maxFrame, bufSize int) *Reader {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	return &Reader{br: bufio.NewReaderSize(r, bufSize), max: maxFrame}
}

// Next returns the next frame: a line without its trailing "\n" and without
// one "\r" before it, byte for byte otherwise. Blank lines (only spaces, tabs
// and "\r") are skipped, unless they are longer than the limit. The returned
// slice is the caller's to keep.
//
// A line longer than the limit returns an error wrapping ErrFrameTooLarge as
// soon as the limit is passed; the next call discards the rest of that line
// without holding it in memory, then returns the frame after it. At the end
// of the stream a final line without "\n" is returned as it is, and then
// io.EOF. A read error is returned and then returned again by every later
// call, since the frame it interrupted cannot be told from the next one.
func (r *Reader) Next() ([]byte, error) {
	for {
		if r.err != nil {
			return nil, r.err
		}
		if r.discard {
			if err := r.skipLine(); err != nil {
				r.err = err
				return nil, err
			}
		}
		line, err := r.br.ReadSlice('\n')
		owned := false
		if err == bufio.ErrBufferFull {
			if line, err = r.readLong(line); line == nil {
				return nil, err
			}
			owned = true
		}
		switch err {
		case nil:
			line = line[:len(line)-1]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
		case io.EOF:
			r.err = io.EOF
		default:
			r.err = err
			return nil, err
		}
		if len(line) > r.max {
			return nil, r.tooLarge()
		}
		if isBlank(line) {
			continue
		}
		if !owned {
			line = bytes.Clone(line)
		}
		return line, nil
	}
}

// readLong gathers a line that did not fit the buffer, first being its start.
// It returns the line (with its "\n", if any) and nil or io.EOF, or a nil
// line and the error to return.
func (r *Reader) readLong(first []byte) ([]byte, error) {
	// The "\r\n" does not count towards the limit, so a line may hold two
	// more bytes; Next checks the exact length once the ending is known.
	limit := r.max + 2
	if len(first) > limit {
		r.discard = true
		return nil, r.tooLarge()
	}
	buf := make([]byte, 0, min(2*len(first), limit))
	buf = append(buf, first...)
	for {
		line, err := r.br.ReadSlice('\n')
		if len(buf)+len(line) > limit {
			switch err {
			case nil: // the line ended here: nothing left to discard
			case bufio.ErrBufferFull:
				r.discard = true
			case io.EOF:
				r.err = io.EOF
			default:
				r.err = err
				return nil, err
			}
			return nil, r.tooLarge()
		}
		if len(buf)+len(line) > cap(buf) {
			grown := make([]byte, len(buf), min(max(2*cap(buf), len(buf)+len(line)), limit))
			copy(grown, buf)
			buf = grown
		}
		buf = append(buf, line...)
		if err != bufio.ErrBufferFull {
			if err != nil && err != io.EOF {
				r.err = err
				return nil, err
			}
			if cap(buf)-len(buf) > len(buf)/8 {
				// Grown by doubling, the buffer may be twice the frame;
				// the frame is held by what counts its length (held and
				// queued messages), so it keeps only its own bytes.
				buf = bytes.Clone(buf)
			}
			return buf, err
		}
	}
}

// skipLine discards input through the next "\n", a buffer at a time.
func (r *Reader) skipLine() error {
	for {
		_, err := r.br.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			if err == nil {
				r.discard = false
			}
			return err
		}
	}
}

func (r *Reader) tooLarge() error {
	return fmt.Errorf("%w: longer than %d bytes", ErrFrameTooLarge, r.max)
}

// isBlank reports whether line holds only spaces, tabs and "\r".
func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// Writer writes frames, each followed by "\n". It is safe for concurrent
// use: each frame goes out in a single Write call on the underlying writer,
// so frames never interleave.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error // sticky: after a failed write the stream may end mid-frame
}

// NewWriter returns a Writer that writes frames to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// Write writes frame and "\n". It refuses a frame that contains "\n". After
// a write fails, every later Write returns the same error: the stream may
// hold part of a frame, and the next frame would be read as its rest.
func (w *Writer) Write(frame []byte) error {
	if bytes.IndexByte(frame, '\n') >= 0 {
		return errNewline
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	buf := append(append(w.buf[:0], frame...), '\n')
	_, err := w.w.Write(buf)
	if cap(buf) <= keepWriteBuf {
		w.buf = buf[:0]
	} else {
		w.buf = nil
	}
	w.err = err
	return err
}
