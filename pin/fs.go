package pin

import (
	"errors"
	"io/fs"
	"os"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// writeSynced writes data to path (created 0600, truncated) and fsyncs it.
// A FIFO or link at path is refused (atomicfile.ErrNotRegular), never
// written through or truncated.
func writeSynced(path string, data []byte) error {
	f, err := atomicfile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
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

// removeIfExists removes path; a missing file is not an error.
func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
