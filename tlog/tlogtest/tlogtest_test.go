package tlogtest

import "testing"

func TestFixtureBuilds(t *testing.T) {
	f := Build(t)
	if n := len(f.Verified.Entries); n != 5 {
		t.Fatalf("%d entries", n)
	}
	if s := f.Verified.Servers(); len(s) != 3 {
		t.Fatalf("servers %v", s)
	}
	if e := f.Verified.Latest("npm:weather-mcp"); e.Since.IsZero() || e.Package.Version != "1.1.0" {
		t.Fatalf("%+v", e)
	}
}
