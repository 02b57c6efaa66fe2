package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// This file reads the log's files: the tip the next event chains to, the
// head, the rotated files, and single lines at either end of a file.

// tip is where the next event goes.
type tip struct {
	seq   int64  // the last event's seq; 0 for an empty log
	hash  string // its line hash; zeroHash for an empty log
	size  int64  // bytes of complete lines in current.jsonl
	first int64  // seq of current.jsonl's first event; 0 when it is empty
}

func (t *tip) advance(seq int64, hash string, n int64) {
	if t.first == 0 {
		t.first = seq
	}
	t.seq, t.hash, t.size = seq, hash, t.size+n
}

// errTail: the log's last event cannot be read, so nothing can chain to
// it. Appends fail until a person looks (mcpseal audit verify).
var errTail = errors.New("the audit log's last event is unreadable or tampered with; run 'mcpseal audit verify'")

// tip reads the last event under the exclusive lock. Bytes after the last
// newline of current.jsonl are an interrupted append and are cut off. A
// current.jsonl that is not a regular file (a FIFO, a link) is a log whose
// tail cannot be read: errTail.
func (l *Log) tip() (tip, error) {
	t := tip{hash: zeroHash}
	cur := filepath.Join(l.dir, currentName)
	fi, err := os.Lstat(cur)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return t, fmt.Errorf("reading the audit log: %w", err)
	case !fi.Mode().IsRegular():
		return t, errTail
	case l.last != nil && os.SameFile(fi, l.lastFile) && fi.Size() == l.last.size:
		return *l.last, nil
	default:
		last, end, err := tailOf(cur, fi.Size())
		if err != nil {
			return t, errTail
		}
		if end < fi.Size() {
			if err := truncate(cur, end); err != nil {
				return t, fmt.Errorf("repairing the audit log: %w", err)
			}
		}
		if last != nil {
			ev, err := parseLine(last)
			if err != nil {
				return t, errTail
			}
			firstLine, err := firstLineOf(cur)
			if err != nil {
				return t, errTail
			}
			first, err := parseLine(firstLine)
			if err != nil {
				return t, errTail
			}
			return tip{seq: ev.Seq, hash: lineHash(last), size: end, first: first.Seq}, nil
		}
	}
	files, err := rotatedFiles(l.dir)
	if err != nil {
		return t, fmt.Errorf("reading the audit log: %w", err)
	}
	if len(files) == 0 {
		return t, nil
	}
	last, err := lastLineOf(filepath.Join(l.dir, files[len(files)-1].name))
	if err != nil {
		return t, errTail
	}
	ev, err := parseLine(last)
	if err != nil {
		return t, errTail
	}
	return tip{seq: ev.Seq, hash: lineHash(last)}, nil
}

// truncate cuts the file at path to size, through the safe opener: a link
// planted at the name is refused, not followed.
func truncate(path string, size int64) error {
	f, err := atomicfile.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// tailWindow is how much of a file's end is read first to find its last
// line: several lines of the usual few hundred bytes.
const tailWindow = 4 << 10

// tailOf returns the last complete line of the file at path (size bytes
// long; nil when there is none) and the offset just past it.
func tailOf(path string, size int64) ([]byte, int64, error) {
	f, err := atomicfile.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	line, end, err := tailIn(f, size, tailWindow)
	if err != nil {
		line, end, err = tailIn(f, size, 2*maxLineBytes)
	}
	return line, end, err
}

// tailIn looks for the last complete line in the last window bytes.
func tailIn(f *os.File, size, window int64) ([]byte, int64, error) {
	from := max(0, size-window)
	buf := make([]byte, size-from)
	if _, err := f.ReadAt(buf, from); err != nil && err != io.EOF {
		return nil, 0, err
	}
	nl := bytes.LastIndexByte(buf, '\n')
	if nl < 0 {
		if from > 0 {
			return nil, 0, errors.New("line too long")
		}
		return nil, 0, nil
	}
	start := bytes.LastIndexByte(buf[:nl], '\n') + 1
	if start == 0 && from > 0 {
		return nil, 0, errors.New("line too long")
	}
	return buf[start:nl], from + int64(nl) + 1, nil
}

// lastLineOf returns the last complete line of a file.
func lastLineOf(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	line, _, err := tailOf(path, fi.Size())
	if err == nil && line == nil {
		err = errors.New("no complete line")
	}
	return line, err
}

// firstLineOf returns the first line of a file.
func firstLineOf(path string) ([]byte, error) {
	f, err := atomicfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, maxLineBytes+1)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	nl := bytes.IndexByte(buf[:n], '\n')
	if nl < 0 {
		return nil, errors.New("no complete first line")
	}
	return buf[:nl], nil
}

// rotated is one rotated file.
type rotated struct {
	first int64 // the seq in its name
	name  string
}

func rotatedName(first int64) string { return fmt.Sprintf("%020d.jsonl", first) }

// rotatedFiles lists the rotated files, oldest first. Other names are not
// the log's and are ignored.
func rotatedFiles(dir string) ([]rotated, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []rotated
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || len(base) != 20 || strings.Trim(base, "0123456789") != "" {
			continue
		}
		n, err := strconv.ParseInt(base, 10, 64)
		if err != nil || n < 1 {
			continue
		}
		out = append(out, rotated{first: n, name: e.Name()})
	}
	slices.SortFunc(out, func(a, b rotated) int { return int(min(max(a.first-b.first, -1), 1)) })
	return out, nil
}

// The head file: one fixed-length line, rewritten in place after every
// append.
const headFormat = "mcpseal-audit-head v1 %020d %s\n"

// maxHeadBytes bounds the read of the head file: its one line is 108
// bytes; anything longer is malformed.
const maxHeadBytes = 256

type head struct {
	seq  int64
	hash string
}

// readHead returns the head; ok is false when there is none.
func readHead(dir string) (head, bool, error) {
	data, err := atomicfile.ReadFile(filepath.Join(dir, headName), maxHeadBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return head{}, false, nil
	}
	if errors.Is(err, atomicfile.ErrTooLarge) {
		return head{}, false, errors.New("the head file is malformed")
	}
	if err != nil {
		return head{}, false, err
	}
	s := string(data)
	rest, ok := strings.CutPrefix(s, "mcpseal-audit-head v1 ")
	if !ok || len(rest) != 20+1+64+1 || rest[20] != ' ' || rest[len(rest)-1] != '\n' {
		return head{}, false, errors.New("the head file is malformed")
	}
	seq, err := strconv.ParseInt(rest[:20], 10, 64)
	h := head{seq: seq, hash: rest[21 : 21+64]}
	if err != nil || seq < 1 || !isHex(h.hash, 64) || fmt.Sprintf(headFormat, h.seq, h.hash) != s {
		return head{}, false, errors.New("the head file is malformed")
	}
	return h, true, nil
}

// writeHead rewrites the head with one write at offset 0: the line has a
// fixed length, so a reader never sees a mix of two heads' lengths.
func writeHead(dir string, seq int64, hash string) error {
	f, err := atomicfile.OpenFile(filepath.Join(dir, headName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("writing the audit head: %w", err)
	}
	_, err = f.WriteAt(fmt.Appendf(nil, headFormat, seq, hash), 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the audit head: %w", err)
	}
	return nil
}
