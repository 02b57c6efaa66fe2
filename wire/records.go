package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Records remember, for every entry wrap changed, the entry's original
// bytes and the bytes wrap wrote, so that unwrap can put the original back
// exactly. They live in $MCPSEAL_HOME/wire/records.json (0600).
//
// A record is used only while the entry still holds exactly the bytes wrap
// wrote; an entry edited since is unwrapped from its launch line instead,
// and a remote one is left for the user to restore from the backup.
type Records struct {
	Version int       `json:"version"`
	Entries []*Record `json:"entries"`
}

// Record is one wrapped entry.
type Record struct {
	File  string   `json:"file"`
	Entry []string `json:"entry"`
	// Original and Wrapped are the entry's bytes before and after wrap.
	Original string `json:"original"`
	Wrapped  string `json:"wrapped"`
	// Credential is the credential file wrap wrote for a remote entry.
	Credential string    `json:"credential,omitempty"`
	At         time.Time `json:"at"`
}

const recordsVersion = 1

// maxRecordsSize bounds records.json. A record holds two copies of one
// entry (a few hundred bytes); 64 MiB is far above any machine's configs.
const maxRecordsSize = 64 << 20

func recordsPath(home string) string { return filepath.Join(home, "wire", "records.json") }

// LoadRecords reads the records; a missing file is an empty set.
func LoadRecords(home string) (*Records, error) {
	data, err := atomicfile.ReadFile(recordsPath(home), maxRecordsSize)
	if errors.Is(err, fs.ErrNotExist) {
		return &Records{Version: recordsVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the wrap records: %w", err)
	}
	var r Records
	if err := json.Unmarshal(data, &r); err != nil || r.Version != recordsVersion {
		return nil, errors.New("the wrap records (wire/records.json) are damaged; move the file away to continue (unwrap then works from launch lines and backups)")
	}
	return &r, nil
}

func (r *Records) save(home string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(recordsPath(home), append(data, '\n'), 0o600)
}

func (r *Records) find(file string, where []string) *Record {
	for _, rec := range r.Entries {
		if rec.File == file && slices.Equal(rec.Entry, where) {
			return rec
		}
	}
	return nil
}

func (r *Records) put(rec *Record) {
	if old := r.find(rec.File, rec.Entry); old != nil {
		*old = *rec
		return
	}
	r.Entries = append(r.Entries, rec)
}

func (r *Records) drop(file string, where []string) {
	r.Entries = slices.DeleteFunc(r.Entries, func(rec *Record) bool {
		return rec.File == file && slices.Equal(rec.Entry, where)
	})
}

// credentialPath is where wrap keeps the headers of a remote entry.
func credentialPath(home, file string, where []string) string {
	sum := sha256.Sum256([]byte(file + "\x00" + strings.Join(where, "\x00")))
	return filepath.Join(home, "credentials", hex.EncodeToString(sum[:8])+".json")
}

// Credential is the file `mcpseal run --url --credential-file` reads: the
// headers to send to that one upstream. Version 1.
type Credential struct {
	Version int               `json:"version"`
	Headers map[string]string `json:"headers"`
}

func jsonIndent(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
