package pin

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// writeSynced writes data to path (a new file, 0600) and fsyncs it.
func writeSynced(path string, data []byte) error {
	f, err := createFresh(path, os.O_WRONLY)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// createFresh creates path anew (0600, opened with flag): whatever is at
// the name is removed first, and the file is created exclusively, so that
// nothing planted there is written through: not a symbolic link, a FIFO
// (atomicfile), nor a hard link to another file (which O_TRUNC would have
// emptied and overwritten: another server's record, the event log). A
// name planted again between the removal and the creation fails the
// creation.
func createFresh(path string, flag int) (*os.File, error) {
	if err := removeIfExists(path); err != nil {
		return nil, err
	}
	return atomicfile.OpenFile(path, flag|os.O_CREATE|os.O_EXCL, 0o600)
}

// removeIfExists removes path; a missing file is not an error.
func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeRecordFile writes server id's record r to path (a new file, see
// createFresh), fsyncs it, and reads the
// file back through readBack: nothing is committed that would not read
// back as a sound record. It returns the file's hash (fileHash of its
// bytes). The record is written as it is encoded and read back a member at
// a time, so that neither its bytes nor a decoded copy of its definitions
// is held whole: for a server of 10,000 tools that is 11 MB at the first
// pin, when the listing and its canonical definitions are held too. The
// file is removed when it fails.
func writeRecordFile(path, id string, r *record) (digest string, err error) {
	f, err := createFresh(path, os.O_RDWR)
	if err != nil {
		return "", fileError(id, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			removeIfExists(path)
		}
	}()
	// Writes past maxRecordSize fail, so that a record too large is
	// refused without filling the disk first.
	h := sha256.New()
	lw := &limitedWriter{w: f, left: maxRecordSize}
	bw := bufio.NewWriterSize(io.MultiWriter(lw, h), 64<<10)
	if err := writeRecord(bw, r); err != nil {
		if lw.over {
			return "", fmt.Errorf("the record would pass its %d-byte limit", maxRecordSize)
		}
		return "", err
	}
	if err := bw.Flush(); err != nil {
		if lw.over {
			return "", fmt.Errorf("the record would pass its %d-byte limit", maxRecordSize)
		}
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	size := maxRecordSize - lw.left
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	// What is read back is hashed as it is read: the hash the event will
	// carry is that of the bytes that decoded, not of the bytes meant.
	rh := sha256.New()
	src := io.TeeReader(io.LimitReader(f, size+1), rh)
	if _, err := readBack(id, bufio.NewReaderSize(src, 64<<10), r.Definitions); err != nil {
		return "", fmt.Errorf("the contract cannot be stored faithfully: %v", err)
	}
	written, read := h.Sum(nil), rh.Sum(nil)
	if !bytes.Equal(written, read) {
		return "", errors.New("the record file does not read back as it was written")
	}
	return hex.EncodeToString(read), nil
}

// limitedWriter writes to w until left bytes are used up, then fails.
type limitedWriter struct {
	w    io.Writer
	left int64
	over bool
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		l.over = true
		return 0, errors.New("record too large")
	}
	n, err := l.w.Write(p)
	l.left -= int64(n)
	return n, err
}
