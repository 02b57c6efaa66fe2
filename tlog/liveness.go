package tlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"sort"
	"time"
)

// Liveness is when the crawler last checked each server: kept beside the
// log in liveness.json, not signed, and never evidence of anything but
// the crawler's own account of its visits.
type Liveness struct {
	Version int `json:"version"`
	// LastCrawl is when the last crawl finished; nil before the first.
	LastCrawl *time.Time                 `json:"lastCrawl"`
	Servers   map[string]*ServerLiveness `json:"servers"`
}

// ServerLiveness is what the crawler knows of one server's visits.
type ServerLiveness struct {
	// Checked is the last probe attempt.
	Checked time.Time `json:"checked"`
	// Seen is the last time a probe read the server's contract; nil if it
	// never did.
	Seen *time.Time `json:"seen,omitempty"`
	// Failure is the reason code of the last attempt when it failed.
	Failure string `json:"failure,omitempty"`
	// Version is the package version last probed (registry servers).
	Version string `json:"version,omitempty"`
}

const livenessVersion = 1

// MaxLivenessSize bounds liveness.json: about 200 bytes a server, so
// 32 MiB holds the whole npm MCP ecosystem many times over.
const MaxLivenessSize = 32 << 20

// ErrMalformedLiveness reports a liveness.json that does not decode or
// holds values outside their forms.
var ErrMalformedLiveness = errors.New("tlog: malformed liveness.json")

// ReadLiveness reads liveness.json; a missing file is an empty record.
func ReadLiveness(st Storage) (*Liveness, error) {
	b, err := st.ReadFile(LivenessFile, MaxLivenessSize)
	if errors.Is(err, fs.ErrNotExist) {
		return &Liveness{Version: livenessVersion, Servers: map[string]*ServerLiveness{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var l Liveness
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&l); err != nil || l.Version != livenessVersion {
		return nil, ErrMalformedLiveness
	}
	if l.Servers == nil {
		l.Servers = map[string]*ServerLiveness{}
	}
	for id, s := range l.Servers {
		if !ValidServer(id) || s == nil || !validCode(s.Failure) || (s.Version != "" && !validVersion(s.Version)) {
			return nil, ErrMalformedLiveness
		}
	}
	return &l, nil
}

// WriteLiveness writes liveness.json atomically.
func WriteLiveness(st Storage, l *Liveness) error {
	l.Version = livenessVersion
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return st.WriteFile(LivenessFile, append(b, '\n'))
}

// validCode accepts "" or a reason code: 1 to 40 of [a-z0-9-].
func validCode(s string) bool {
	if len(s) > 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Servers returns every server with an entry, sorted.
func (v *Verified) Servers() []string {
	v.index()
	out := make([]string, 0, len(v.byServer))
	for s := range v.byServer {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// History returns the indexes of a server's entries, oldest first.
func (v *Verified) History(server string) []int {
	v.index()
	return slices.Clone(v.byServer[server])
}

// Latest returns a server's latest entry, nil if it has none.
func (v *Verified) Latest(server string) *Entry {
	v.index()
	h := v.byServer[server]
	if len(h) == 0 {
		return nil
	}
	return v.Parsed[h[len(h)-1]]
}

func (v *Verified) index() {
	if v.byServer != nil {
		return
	}
	v.byServer = map[string][]int{}
	for i, e := range v.Parsed {
		v.byServer[e.Server] = append(v.byServer[e.Server], i)
	}
}
