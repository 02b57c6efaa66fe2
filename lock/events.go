package lock

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mcpseal/mcpseal/contract"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
)

// EventsVersion is the version of every lock event line. Fields are only
// ever added within a version.
const EventsVersion = 1

// maxEventItems bounds the withheld definitions one listing event names;
// the counts are always complete.
const maxEventItems = 1000

// Events writes lock events, one JSON line each, for --lock-events:
//
//	{"v":1,"time":"2026-11-02T10:00:00Z","event":"listing","server":"files","kind":"tools",
//	 "served":9,"shown":2,"withheld":7,"items":[{"name":"create_entities","digest":"sha256:...","reason":"new"}]}
//	{"v":1,"time":"2026-11-02T10:00:03Z","event":"refused","server":"files","kind":"tools",
//	 "name":"create_entities","digest":"sha256:...","reason":"new"}
//
// Lines hold names (reduced by contract.SafeName), digests, reasons and
// counts: never a description, an argument or any other text. Events is
// safe for concurrent use; each line is one write.
type Events struct {
	mu  sync.Mutex
	w   io.Writer
	c   io.Closer
	now func() time.Time
}

// OpenEvents opens (creating 0600, appending) the events file at path. It
// must be a regular file or absent: a FIFO (which would block the session
// until a reader appears), a device or a symbolic link is refused. To
// follow the events as they come, tail the file.
func OpenEvents(path string) (*Events, error) {
	f, err := atomicfile.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &Events{w: f, c: f, now: time.Now}, nil
}

// NewEvents writes events to w.
func NewEvents(w io.Writer) *Events { return &Events{w: w, now: time.Now} }

// Close closes the file OpenEvents opened.
func (ev *Events) Close() error {
	if ev == nil || ev.c == nil {
		return nil
	}
	return ev.c.Close()
}

// EventItem is one withheld definition in an event.
type EventItem struct {
	Name   string `json:"name"`
	Digest string `json:"digest,omitempty"`
	Reason Reason `json:"reason"`
}

// Event is one line. Its Kind is a contract kind or "instructions".
type Event struct {
	V      int    `json:"v"`
	Time   string `json:"time"`
	Event  string `json:"event"` // "listing" or "refused"
	Server string `json:"server"`
	Kind   string `json:"kind"`
	// listing
	Served    *int        `json:"served,omitempty"`
	Shown     *int        `json:"shown,omitempty"`
	Withheld  *int        `json:"withheld,omitempty"`
	Items     []EventItem `json:"items,omitempty"`
	Truncated bool        `json:"truncated,omitempty"`
	// refused
	Name   string `json:"name,omitempty"`
	Digest string `json:"digest,omitempty"`
	Reason Reason `json:"reason,omitempty"`
}

// Listing records one listing the gate filtered for server: the verdicts
// of every definition of kind k it served (Review.Verdicts of that kind,
// or the instructions' verdict with contract.InstructionsKind).
func (ev *Events) Listing(server string, k contract.Kind, verdicts []Verdict) error {
	if ev == nil {
		return nil
	}
	served, shown := 0, 0
	var items []EventItem
	truncated := false
	for _, v := range verdicts {
		if v.Kind != k {
			continue
		}
		served++
		if v.Shown {
			shown++
			continue
		}
		if len(items) == maxEventItems {
			truncated = true
			continue
		}
		items = append(items, EventItem{Name: eventName(k, v.Name), Digest: v.Digest, Reason: v.Reason})
	}
	withheld := served - shown
	return ev.write(Event{Event: "listing", Server: server, Kind: string(k),
		Served: &served, Shown: &shown, Withheld: &withheld, Items: items, Truncated: truncated})
}

// Refused records a refused call (tools/call, prompts/get,
// resources/read) to a withheld definition. digest may be "".
func (ev *Events) Refused(server string, k contract.Kind, name, digest string, reason Reason) error {
	if ev == nil {
		return nil
	}
	return ev.write(Event{Event: "refused", Server: server, Kind: string(k), Name: eventName(k, name), Digest: digest, Reason: reason})
}

func eventName(k contract.Kind, name string) string {
	if k == contract.InstructionsKind {
		return ""
	}
	return contract.SafeName(name)
}

func (ev *Events) write(e Event) error {
	e.V = EventsVersion
	e.Time = ev.now().UTC().Format(time.RFC3339Nano)
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(e); err != nil {
		return err
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	_, err := ev.w.Write(buf.Bytes())
	return err
}
