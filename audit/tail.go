package audit

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// MaxTail bounds how many events Tail returns.
const MaxTail = 10000

// Tail returns the last n events of the log under home, oldest first
// (n is capped at MaxTail). It reads for display: lines that do not parse
// are skipped and counted in skipped; Verify is the check.
func Tail(home string, n int) (events []Event, skipped int, err error) {
	return TailMatching(home, n, nil)
}

// TailMatching is Tail over the events keep accepts (nil: all): the last
// n of those.
func TailMatching(home string, n int, keep func(*Event) bool) (events []Event, skipped int, err error) {
	n = min(max(n, 0), MaxTail)
	if n == 0 {
		return nil, 0, nil
	}
	dir, files, unlock, present, err := openForReading(home)
	if err != nil || !present {
		return nil, 0, err
	}
	defer unlock()
	names := []string{currentName}
	for i := len(files) - 1; i >= 0; i-- {
		names = append(names, files[i].name)
	}
	for _, name := range names {
		got, bad, err := lastEvents(filepath.Join(dir, name), n-len(events), keep)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		events = append(got, events...)
		skipped += bad
		if len(events) >= n {
			break
		}
	}
	return events, skipped, nil
}

// lastEvents returns the last n events of one file, oldest first.
func lastEvents(path string, n int, keep func(*Event) bool) ([]Event, int, error) {
	f, err := atomicfile.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	ring := make([]Event, n) // the last n events, circular from next
	count, next, skipped := 0, 0, 0
	r := bufio.NewReaderSize(f, maxLineBytes+1)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Skip the rest of an overlong line.
			skipped++
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		e, perr := parseLine(bytes.TrimSuffix(line, []byte("\n")))
		if perr != nil {
			skipped++
			continue
		}
		if keep != nil && !keep(&e) {
			continue
		}
		ring[next] = e
		next = (next + 1) % n
		count++
	}
	if count < n {
		return ring[:count], skipped, nil
	}
	return append(ring[next:], ring[:next]...), skipped, nil
}
