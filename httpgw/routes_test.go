package httpgw

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type routesVector struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	Raw  string `json:"raw"`
}

func routesVectors(t testing.TB) []routesVector {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "httpgw", "routes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []routesVector `json:"vectors"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no routes vectors")
	}
	return f.Vectors
}

func TestRoutesFileVectors(t *testing.T) {
	t.Parallel()
	for _, v := range routesVectors(t) {
		_, err := ParseRoutes([]byte(v.Raw))
		if (err == nil) != v.OK {
			t.Errorf("%s: err = %v, want ok=%v", v.Name, err, v.OK)
		}
		if err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "evil")) {
			t.Errorf("%s: error echoes a value: %v", v.Name, err)
		}
	}
}

func TestReadRoutesBounded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "routes.json")
	big := `{"routes":{"a":{"url":"https://x.example/mcp","name":"` + strings.Repeat("x", MaxRoutesFile) + `"}}}`
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRoutes(path); err == nil {
		t.Error("read a routes file over the limit")
	}
}

// TestRouteIdentity: a command route without a name shares its pins with
// `mcpseal run` of the same command; a url route's identity is its URL.
func TestRouteIdentity(t *testing.T) {
	t.Parallel()
	rs, err := ParseRoutes([]byte(`{"routes":{"a":{"command":["npx","-y","pkg"]},"b":{"url":"https://x.example/mcp"},"c":{"url":"https://x.example/mcp","name":"docs"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := rs.Routes["a"].Identity(); got.Label != "npx [2 args]" {
		t.Errorf("command identity %+v", got)
	}
	if got := rs.Routes["b"].Identity(); got.Label != "https://x.example/mcp" {
		t.Errorf("url identity %+v", got)
	}
	if got := rs.Routes["c"].Identity(); got.Label != "docs" {
		t.Errorf("named identity %+v", got)
	}
}

// FuzzParseRoutes: any input is accepted or refused without a panic, and
// what is accepted reads back the same after re-encoding.
func FuzzParseRoutes(f *testing.F) {
	for _, v := range routesVectors(f) {
		f.Add([]byte(v.Raw))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ParseRoutes(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(rs)
		if err != nil {
			t.Fatal(err)
		}
		rs2, err := ParseRoutes(again)
		if err != nil {
			t.Fatalf("re-encoded routes refused: %v\n%s", err, again)
		}
		if !reflect.DeepEqual(rs, rs2) {
			t.Fatalf("round trip changed the routes:\n%s", again)
		}
	})
}
