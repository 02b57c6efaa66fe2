package egress

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
)

// An Event is one server-sent event.
type Event struct {
	// ID is the last event id seen on the stream when this event was
	// dispatched (the "id" field persists across events, as the SSE
	// specification says).
	ID    string
	Type  string // "message" when the event named none
	Data  []byte // the data lines joined with "\n"
	Retry int    // milliseconds; 0 when the event set none
}

// Errors from SSEReader.Next. Both are fatal for the stream.
var (
	// ErrEventTooLarge: one event's data passed the per-message limit.
	ErrEventTooLarge = errors.New("egress: server-sent event exceeds the message limit")
	// ErrStreamTooLarge: the stream passed its total byte limit.
	ErrStreamTooLarge = errors.New("egress: event stream exceeds its byte limit")
)

// maxIDLen bounds an event id: ids are echoed back in Last-Event-ID, and
// real servers use short opaque strings.
const maxIDLen = 1024

// SSEReader reads server-sent events (the text/event-stream format of the
// HTML standard) with two bounds: the data of one event (MaxEvent) and the
// bytes of the whole stream (MaxStream), counted as read, so neither a huge
// event nor an endless stream of small ones, nor an endless line with no
// event at all, holds more than MaxEvent bytes in memory.
//
// Lines end in "\n", "\r\n" or "\r". A line starting with ':' is a comment.
// Fields other than data, event, id and retry are ignored, as are an id
// containing NUL and a retry that is not all digits.
type SSEReader struct {
	r         *bufio.Reader
	maxEvent  int
	maxStream int64
	read      int64
	lastID    string
	retry     int  // the last retry field, milliseconds
	pendingCR bool // the previous chunk ended in '\r': skip one '\n'
	line      []byte
	err       error
}

// NewSSEReader returns a reader of r.
func NewSSEReader(r io.Reader, maxEvent int, maxStream int64) *SSEReader {
	return &SSEReader{r: bufio.NewReaderSize(r, 32<<10), maxEvent: maxEvent, maxStream: maxStream}
}

// LastID is the stream's last event id: what Last-Event-ID resumes from.
func (s *SSEReader) LastID() string { return s.lastID }

// Next returns the next event with data. It returns io.EOF at the end of
// the stream (an unterminated last event is discarded, as the standard
// says) and a wrapped error for a broken stream.
func (s *SSEReader) Next() (Event, error) {
	var (
		data    []byte
		hasData bool
		typ     string
		retry   int
	)
	for {
		line, err := s.readLine()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if !hasData {
				typ, retry = "", 0
				continue
			}
			if typ == "" {
				typ = "message"
			}
			return Event{ID: s.lastID, Type: typ, Data: data, Retry: retry}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			if len(data)+len(value) > s.maxEvent {
				s.err = ErrEventTooLarge
				return Event{}, s.err
			}
			data = append(data, value...)
			hasData = true
		case "event":
			typ = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 && len(value) <= maxIDLen {
				s.lastID = string(value)
			}
		case "retry":
			if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 && isDigits(value) {
				retry = n
			}
		}
	}
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// readLine returns the next line without its terminator. The returned
// slice is valid until the next call.
func (s *SSEReader) readLine() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	s.line = s.line[:0]
	// A field name, a colon and the largest allowed value.
	limit := s.maxEvent + 64
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				s.err = err
				return nil, err
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.pendingCR {
			s.pendingCR = false
			if buf[0] == '\n' {
				if err := s.consume(1); err != nil {
					return nil, err
				}
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		n := i
		if i < 0 {
			n = len(buf)
		}
		if len(s.line)+n > limit {
			s.err = ErrEventTooLarge
			return nil, s.err
		}
		s.line = append(s.line, buf[:n]...)
		if i < 0 {
			if err := s.consume(n); err != nil {
				return nil, err
			}
			continue
		}
		s.pendingCR = buf[i] == '\r'
		if err := s.consume(i + 1); err != nil {
			return nil, err
		}
		return s.line, nil
	}
}

// consume discards n buffered bytes and counts them against the stream.
func (s *SSEReader) consume(n int) error {
	_, _ = s.r.Discard(n)
	s.read += int64(n)
	if s.read > s.maxStream {
		s.err = ErrStreamTooLarge
		return s.err
	}
	return nil
}
