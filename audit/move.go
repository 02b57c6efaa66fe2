package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// maxMoveBytes bounds the log ReadAll reads into memory: well above the
// default retention (8 files of 8 MiB).
const maxMoveBytes = 512 << 20

// ReadAll returns every line of the log under home, oldest first, with
// its head (headSeq 0 when none), for moving the log elsewhere (`mcpseal
// state import`). A log with faults is refused: nothing unverified is
// moved. An interrupted append's partial line is not part of the log.
func ReadAll(home string) (lines [][]byte, headSeq int64, headHash string, err error) {
	rep, err := Verify(home)
	if err != nil {
		return nil, 0, "", err
	}
	if !rep.OK() {
		return nil, 0, "", fmt.Errorf("the audit log under %s does not verify (%d faults); run 'mcpseal audit verify'", home, len(rep.Faults))
	}
	dir := Dir(home)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, 0, "", nil
	}
	unlock, err := sharedLock(dir)
	if err != nil {
		return nil, 0, "", err
	}
	defer unlock()
	files, err := rotatedFiles(dir)
	if err != nil {
		return nil, 0, "", err
	}
	names := make([]string, 0, len(files)+1)
	for _, f := range files {
		names = append(names, f.name)
	}
	names = append(names, currentName)
	total := 0
	for _, name := range names {
		data, err := atomicfile.ReadFile(filepath.Join(dir, name), maxMoveBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, "", err
		}
		if total += len(data); total > maxMoveBytes {
			return nil, 0, "", fmt.Errorf("the audit log passes %d bytes", maxMoveBytes)
		}
		data = data[:bytes.LastIndexByte(data, '\n')+1]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			lines = append(lines, data[:i])
			data = data[i+1:]
		}
	}
	h, ok, err := readHead(dir)
	if err != nil {
		return nil, 0, "", err
	}
	if ok {
		headSeq, headHash = h.seq, h.hash
	}
	return lines, headSeq, headHash, nil
}

// WriteAll writes lines (verified first, as a log) as the log under home,
// which must have none yet, with the head given (headSeq 0 for the last
// line's), and verifies the result.
func WriteAll(home string, lines [][]byte, headSeq int64, headHash string) error {
	lv := NewLineVerifier("copy")
	if headSeq > 0 {
		lv.SetHead(headSeq, headHash)
	}
	for _, l := range lines {
		lv.Line(l)
	}
	if rep := lv.Report(); !rep.OK() {
		return fmt.Errorf("the audit log to write does not verify (%d faults)", len(rep.Faults))
	}
	dir, err := ensureDir(home)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty; the audit log is written only into an empty folder", dir)
	}
	if len(lines) == 0 {
		return nil
	}
	if headSeq == 0 {
		e, err := parseLine(lines[len(lines)-1])
		if err != nil {
			return err
		}
		headSeq, headHash = e.Seq, lineHash(lines[len(lines)-1])
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	f, err := atomicfile.OpenFile(filepath.Join(dir, currentName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := writeHead(dir, headSeq, headHash); err != nil {
		return err
	}
	rep, err := Verify(home)
	if err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("the audit log written under %s does not verify", home)
	}
	return nil
}
