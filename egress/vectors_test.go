package egress

import (
	"encoding/json"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type addrVector struct {
	Addr      string `json:"addr"`
	Class     Class  `json:"class"`
	PrivateOK bool   `json:"privateOK"`
}

type sseVector struct {
	Name      string `json:"name"`
	Stream    string `json:"stream"`
	MaxEvent  int    `json:"maxEvent"`
	MaxStream int64  `json:"maxStream"`
	Events    []struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Data string `json:"data"`
	} `json:"events"`
	Error string `json:"error"`
}

func loadVectors[T any](t testing.TB, name string) []T {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "egress", name))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []T `json:"vectors"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatalf("%s: no vectors", name)
	}
	return f.Vectors
}

func TestAddressClasses(t *testing.T) {
	t.Parallel()
	for _, v := range loadVectors[addrVector](t, "addresses.json") {
		a := netip.MustParseAddr(v.Addr)
		if got := Classify(a); got != v.Class {
			t.Errorf("Classify(%s) = %s, want %s", v.Addr, got, v.Class)
		}
		if got := privateOK(a); got != v.PrivateOK {
			t.Errorf("privateOK(%s) = %v, want %v", v.Addr, got, v.PrivateOK)
		}
	}
}

func TestSSEVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadVectors[sseVector](t, "sse.json") {
		t.Run(v.Name, func(t *testing.T) {
			maxEvent, maxStream := v.MaxEvent, v.MaxStream
			if maxEvent == 0 {
				maxEvent = 1 << 20
			}
			if maxStream == 0 {
				maxStream = 1 << 20
			}
			r := NewSSEReader(strings.NewReader(v.Stream), maxEvent, maxStream)
			var err error
			for i := 0; ; i++ {
				var ev Event
				ev, err = r.Next()
				if err != nil {
					if i != len(v.Events) {
						t.Fatalf("got %d events, want %d (err %v)", i, len(v.Events), err)
					}
					break
				}
				if i >= len(v.Events) {
					t.Fatalf("extra event %+v", ev)
				}
				w := v.Events[i]
				if ev.Type != w.Type || ev.ID != w.ID || string(ev.Data) != w.Data {
					t.Errorf("event %d = {%q %q %q}, want {%q %q %q}", i, ev.Type, ev.ID, ev.Data, w.Type, w.ID, w.Data)
				}
			}
			want := map[string]error{"": io.EOF, "event-too-large": ErrEventTooLarge, "stream-too-large": ErrStreamTooLarge}[v.Error]
			if !errors.Is(err, want) {
				t.Errorf("err = %v, want %v", err, want)
			}
		})
	}
}

// FuzzSSEReader: any byte stream ends in events within the bounds and an
// error, never a panic, a hang or more memory than the bounds allow.
func FuzzSSEReader(f *testing.F) {
	for _, v := range loadVectors[sseVector](f, "sse.json") {
		f.Add([]byte(v.Stream))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const maxEvent, maxStream = 64, 512
		r := NewSSEReader(strings.NewReader(string(b)), maxEvent, maxStream)
		for n := 0; ; n++ {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > maxEvent {
				t.Fatalf("event of %d bytes passed the %d-byte limit", len(ev.Data), maxEvent)
			}
			if len(ev.ID) > maxIDLen || strings.ContainsRune(ev.ID, 0) {
				t.Fatalf("bad id %q", ev.ID)
			}
			if n > len(b) {
				t.Fatal("more events than bytes")
			}
		}
	})
}
