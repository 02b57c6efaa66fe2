package pin

import (
	"testing"
)

// FuzzSnapshotCheck: a snapshot (a home folder being imported, rows
// being exported) is untrusted until Check accepts it; Check never panics
// and accepts only a chain that parses and records that match it. The
// seed is a real store's snapshot, with an approval that names who.
func FuzzSnapshotCheck(f *testing.F) {
	s, _ := openStore(f)
	id := IdentityForName("fuzz")
	if _, err := s.Observe(id, obsOf("2025-06-18|"), contractOf(nil, tool(f, "a", "v1")), Guard, t0); err != nil {
		f.Fatal(err)
	}
	res, err := s.Observe(id, obsOf("2025-06-18|"), contractOf(nil, tool(f, "a", "v2")), Guard, t0)
	if err != nil {
		f.Fatal(err)
	}
	if err := s.ApproveBy(id.ID, res.Pending, "alice", t0); err != nil {
		f.Fatal(err)
	}
	snap, err := s.Snapshot()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(snap.Events, snap.Records[id.ID])
	f.Add(snap.Events[:len(snap.Events)/2], snap.Records[id.ID])
	f.Fuzz(func(t *testing.T, events, record []byte) {
		sn := &Snapshot{Events: events, Records: map[string][]byte{id.ID: record}}
		if sn.Check() != nil {
			return
		}
		c, err := parseChain(events)
		if err != nil {
			t.Fatalf("accepted a chain that does not parse: %v", err)
		}
		if ev, ok := c.pinned(id.ID); !ok || *ev.Record != fileHash(record) {
			t.Fatal("accepted a record the chain does not account for")
		}
	})
}
