package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrapEveryClientThenUnwrap is the round trip over a fake
// HOME with a config for every client: wrap (golden files), wrap again
// (nothing to do), backups, credentials, the invalid file left alone,
// then unwrap (byte for byte the original files).
func TestWrapEveryClientThenUnwrap(t *testing.T) {
	home := copyHome(t)
	o := testOptions(t)
	before := snapshot(t, home)
	files := homeFiles(home, true)
	if len(files) != 11 {
		t.Fatalf("found %d config files, want 11 (every client, two Cline files, one project)", len(files))
	}

	recs, err := LoadRecords(o.Home)
	if err != nil {
		t.Fatal(err)
	}
	p := PlanWrap(files, o, recs)
	wantActions := map[string]Action{
		"claude-desktop/mcpServers/filesystem":                     Wrap,
		"claude-desktop/mcpServers/weather":                        Wrap,
		"claude-code/mcpServers/memory":                            Wrap,
		"claude-code/mcpServers/sentry":                            Wrap,
		"claude-code/projects/" + home + "/work/app/mcpServers/db": Wrap,
		"claude-code/mcpServers/playwright":                        Wrap,
		"cursor/mcpServers/github":                                 Wrap,
		"cursor/mcpServers/docs":                                   Wrap,
		"cursor/mcpServers/time":                                   Wrap,
		"vscode/servers/everything":                                Wrap,
		"vscode/servers/perplexity":                                Wrap,
		"vscode/servers/remote-docs":                               Refuse, // header names a variable
		"vscode/servers/events":                                    Refuse, // SSE
		"windsurf/mcpServers/puppeteer":                            Wrap,
		"windsurf/mcpServers/figma":                                Wrap,
		"cline/mcpServers/fetch":                                   Wrap,
		"cline/mcpServers/git":                                     Wrap,
		"gemini/mcpServers/pythonTools":                            Wrap,
		"gemini/mcpServers/httpServer":                             Wrap,
		"zed/context_servers/sqlite":                               Wrap,
		"zed/context_servers/legacy":                               Wrap,
		"zed/context_servers/postgres":                             Skip, // a Zed extension
		"codex/mcp_servers/context7":                               Wrap,
		"codex/mcp_servers/shell":                                  Wrap,
		"codex/mcp_servers/figma":                                  Wrap,
		"codex/mcp_servers/linear":                                 Refuse, // bearer_token_env_var
	}
	got := actions(p)
	for k, want := range wantActions {
		if got[k] != want {
			t.Errorf("%s: action %q, want %q", k, got[k], want)
		}
	}
	if len(got) != len(wantActions) {
		t.Errorf("plan has %d entries, want %d: %v", len(got), len(wantActions), got)
	}
	var invalid int
	for _, fp := range p.Files {
		if fp.Err != nil {
			invalid++
			if !strings.Contains(fp.File.Path, ".cline") {
				t.Errorf("%s: unexpected error %v", fp.File.Path, fp.Err)
			}
			var se *SyntaxError
			if !errorsAs(fp.Err, &se) || se.Line != 5 {
				t.Errorf("invalid file error = %v, want a syntax error on line 5", fp.Err)
			}
		}
	}
	if invalid != 1 {
		t.Fatalf("%d files left alone, want 1 (the invalid Cline file)", invalid)
	}
	backups, err := p.Apply()
	if err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, home)
	for rel, data := range after {
		golden(t, "wrap/"+rel, data, home, "@HOME@", o.Home, "@MCPSEAL_HOME@")
	}
	if !bytes.Equal(after[".cline/data/settings/cline_mcp_settings.json"], before[".cline/data/settings/cline_mcp_settings.json"]) {
		t.Error("the invalid file was edited")
	}

	// Backups: every written file, byte for byte, under its own path.
	for _, fp := range p.Files {
		if !fp.Writes() {
			continue
		}
		b, err := os.ReadFile(backupPath(backups, fp.File.Path))
		if err != nil {
			t.Fatalf("backup of %s: %v", fp.File.Path, err)
		}
		rel, _ := filepath.Rel(home, fp.File.Path)
		if !bytes.Equal(b, before[filepath.ToSlash(rel)]) {
			t.Errorf("backup of %s differs from the original", rel)
		}
	}
	if !strings.HasPrefix(backups, filepath.Join(o.Home, "backups", "20261130T120000Z")) {
		t.Errorf("backups in %s", backups)
	}

	// Credentials: the literal headers moved to 0600 files; the config no
	// longer holds them.
	creds, _ := filepath.Glob(filepath.Join(o.Home, "credentials", "*.json"))
	if len(creds) != 3 {
		t.Fatalf("%d credential files, want 3 (cursor docs, gemini httpServer, codex figma)", len(creds))
	}
	for _, c := range creds {
		fi, err := os.Stat(c)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("credential %s: mode %v, %v", c, fi.Mode(), err)
		}
		var cr Credential
		data, _ := os.ReadFile(c)
		if err := json.Unmarshal(data, &cr); err != nil || cr.Version != 1 || len(cr.Headers) != 1 {
			t.Errorf("credential %s = %s", c, data)
		}
	}
	if bytes.Contains(after[".cursor/mcp.json"], []byte("s3cret-token")) {
		t.Error("the cursor config still holds the secret header")
	}

	// Wrap again: nothing to write.
	recs, _ = LoadRecords(o.Home)
	again := PlanWrap(files, o, recs)
	for _, fp := range again.Files {
		if fp.Writes() {
			t.Errorf("wrapping again would rewrite %s", fp.File.Path)
		}
	}
	for k, a := range actions(again) {
		if a == Wrap || a == Update {
			t.Errorf("wrapping again: %s %s", k, a)
		}
	}

	// Unwrap: the original bytes, every file.
	recs, _ = LoadRecords(o.Home)
	up := PlanUnwrap(files, o, recs)
	if _, err := up.Apply(); err != nil {
		t.Fatal(err)
	}
	restored := snapshot(t, home)
	for rel, data := range before {
		if !bytes.Equal(restored[rel], data) {
			t.Errorf("%s after unwrap differs from the original:\n%s", rel, restored[rel])
		}
	}
	if creds, _ := filepath.Glob(filepath.Join(o.Home, "credentials", "*.json")); len(creds) != 0 {
		t.Errorf("credential files left after unwrap: %v", creds)
	}
	recs, _ = LoadRecords(o.Home)
	if len(recs.Entries) != 0 {
		t.Errorf("%d records left after unwrap", len(recs.Entries))
	}
}

// TestWrapSkipRemoteLeavesURLsAlone: --skip-remote touches no remote
// entry, and writes no credential.
func TestWrapSkipRemoteLeavesURLsAlone(t *testing.T) {
	home := copyHome(t)
	o := testOptions(t)
	o.SkipRemote = true
	p := PlanWrap(homeFiles(home, false), o, &Records{Version: recordsVersion})
	for k, a := range actions(p) {
		remote := strings.HasSuffix(k, "/sentry") || strings.HasSuffix(k, "/docs") || strings.HasSuffix(k, "/figma") || strings.HasSuffix(k, "/httpServer") ||
			strings.HasSuffix(k, "/remote-docs") || strings.HasSuffix(k, "/events") || strings.HasSuffix(k, "/linear")
		if remote && a != Skip {
			t.Errorf("%s: %s, want skip", k, a)
		}
	}
	if _, err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	cursor, _ := os.ReadFile(filepath.Join(home, ".cursor", "mcp.json"))
	if !bytes.Contains(cursor, []byte(`"url": "https://mcp.example.com/mcp",`+"\n"+`      "headers": { "Authorization": "Bearer s3cret-token" }`)) {
		t.Errorf("the remote entry changed:\n%s", cursor)
	}
	if creds, _ := filepath.Glob(filepath.Join(o.Home, "credentials", "*")); len(creds) != 0 {
		t.Errorf("credentials written with --skip-remote: %v", creds)
	}
}

// TestProjectConfigEditedOnlyWhenAsked: without the project files in the
// target list, the team's .mcp.json stays as it is.
func TestProjectConfigEditedOnlyWhenAsked(t *testing.T) {
	home := copyHome(t)
	o := testOptions(t)
	project := filepath.Join(home, "work", "app", ".mcp.json")
	before, _ := os.ReadFile(project)
	if _, err := PlanWrap(homeFiles(home, false), o, &Records{Version: recordsVersion}).Apply(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(project); !bytes.Equal(before, after) {
		t.Error("the project config was edited without --project")
	}
	recs, _ := LoadRecords(o.Home)
	if _, err := PlanWrap(homeFiles(home, true), o, recs).Apply(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(project); bytes.Equal(before, after) {
		t.Error("the project config was not edited with --project")
	}
}

// TestWrapAddsOnlyMissingLock: a wrapped entry gets --lock before its
// server command, and keeps everything else; one wrapped with another lock
// is left alone.
func TestWrapAddsOnlyMissingLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	src := `{"mcpServers": {
  "a": {"command": "` + testSelf + `", "args": ["run", "--name", "a", "--", "npx", "srv"]},
  "b": {"command": "` + testSelf + `", "args": ["run", "--lock", "/other.lock", "--", "npx", "srv"]},
  "c": {"command": "` + testSelf + `", "args": ["run", "--", "npx", "srv"]}
}}`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t)
	o.Lock = "/etc/mcpseal/mcpseal.lock"
	p := PlanWrap([]File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}, o, &Records{Version: recordsVersion})
	if _, err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := `{"mcpServers": {
  "a": {"command": "` + testSelf + `", "args": ["run", "--name", "a", "--lock", "/etc/mcpseal/mcpseal.lock", "--", "npx", "srv"]},
  "b": {"command": "` + testSelf + `", "args": ["run", "--lock", "/other.lock", "--", "npx", "srv"]},
  "c": {"command": "` + testSelf + `", "args": ["run", "--lock", "/etc/mcpseal/mcpseal.lock", "--", "npx", "srv"]}
}}`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if a := actions(p); a["custom/mcpServers/b"] != Keep || a["custom/mcpServers/c"] != Update {
		t.Errorf("actions %v", a)
	}
}

// TestWrapRepairsMovedBinary: an entry wrapped by an mcpseal that is no
// longer there is pointed at this one; the rest of the line is kept.
func TestWrapRepairsMovedBinary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	gone := filepath.Join(dir, "old", "mcpseal")
	src := `{"mcpServers": {"a": {"command": ` + jsonString(gone) + `, "args": ["run", "--name", "a", "--", "npx", "srv"]}}}`
	os.WriteFile(path, []byte(src), 0o600)
	o := testOptions(t)
	p := PlanWrap([]File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}, o, &Records{Version: recordsVersion})
	if a := actions(p)["custom/mcpServers/a"]; a != Update {
		t.Fatalf("action %s, want update", a)
	}
	if _, err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := `{"mcpServers": {"a": {"command": "` + testSelf + `", "args": ["run", "--name", "a", "--", "npx", "srv"]}}}`; string(got) != want {
		t.Errorf("got %s", got)
	}
}

// TestClientWritesDuringWrapWins: a file the client rewrote after the plan
// was made is not overwritten.
func TestClientWritesDuringWrapWins(t *testing.T) {
	home := copyHome(t)
	o := testOptions(t)
	p := PlanWrap(homeFiles(home, false), o, &Records{Version: recordsVersion})
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	changed := []byte(`{"mcpServers": {}}`)
	if err := os.WriteFile(cursor, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(); err == nil {
		t.Fatal("Apply succeeded over a file changed meanwhile")
	}
	if got, _ := os.ReadFile(cursor); !bytes.Equal(got, changed) {
		t.Errorf("the client's write was overwritten: %s", got)
	}
	for _, fp := range p.Files {
		if fp.File.Client != "cursor" {
			continue
		}
		for _, c := range fp.Changes {
			if c.credential == "" {
				continue
			}
			if _, err := os.Stat(c.credential); err == nil {
				t.Errorf("the credential of the unwritten entry %s was left behind", c.Entry.Name)
			}
		}
	}
}

// TestUnwrapAfterUserEditKeepsTheEdit: an entry edited after wrap is
// unwrapped from its launch line, and the user's edit stays.
func TestUnwrapAfterUserEditKeepsTheEdit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "npx", "args": ["srv"]}}}`), 0o600)
	files := []File{{Client: "custom", Path: path, Shape: ShapeMCPServers}}
	o := testOptions(t)
	if _, err := PlanWrap(files, o, &Records{Version: recordsVersion}).Apply(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	edited := bytes.Replace(data, []byte(`"args"`), []byte(`"env": {"X": "1"}, "args"`), 1)
	os.WriteFile(path, edited, 0o600)
	recs, _ := LoadRecords(o.Home)
	if _, err := PlanUnwrap(files, o, recs).Apply(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := `{"mcpServers": {"a": {"command": "npx", "env": {"X": "1"}, "args": ["srv"]}}}`; string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func errorsAs(err error, target **SyntaxError) bool {
	for err != nil {
		if se, ok := err.(*SyntaxError); ok {
			*target = se
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}
