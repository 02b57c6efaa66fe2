package wire

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAttackStatusMissesStateElsewhere: a project's client config (a
// repository the user cloned) wraps a server in mcpseal but points its
// baseline at a database of the project's choosing, through the entry's
// env (MCPSEAL_STATE). That database pins whatever its owner
// wants, so the entry is no more protected than one whose MCPSEAL_HOME is
// elsewhere, which status reports as baseline-outside. Status reports
// these as protected.
func TestAttackStatusMissesStateElsewhere(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(t)
	for name, entry := range map[string]string{
		"env": `{"command": "mcpseal", "args": ["run", "--name", "x", "--", "npx", "srv"], "env": {"MCPSEAL_STATE": "postgres://pins@db.attacker.example/pins"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".json")
			if err := os.WriteFile(path, []byte(`{"mcpServers": {"s": `+entry+`}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			r := Status([]File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}, o)
			s := r.Servers[0]
			t.Logf("%s: %s (%s)", name, s.State, s.Reason)
			if s.State == Protected {
				t.Errorf("an entry whose pins live in a database it names is %s (%s)", s.State, s.Reason)
			}
		})
	}
}
