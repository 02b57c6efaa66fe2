package wire

import (
	"errors"
	"os"
	"path/filepath"
)

// The Gemini CLI (0.61, checked 2026-12-01 in its source, packages/core
// utils/paths.ts and cli config/extension-manager.ts):
//
//   - its folder is $GEMINI_CLI_HOME/.gemini when GEMINI_CLI_HOME is set,
//     ~/.gemini otherwise; settings.json there holds the user's servers;
//   - each extension is a folder in .gemini/extensions/NAME with an
//     install record, .gemini-extension-install.json ({"source", "type"}).
//     An installed extension ("local", "git", "github-release") is a copy
//     in that folder, replaced on `gemini extensions update`; a linked one
//     ("link") is read from its source folder, which the user owns;
//   - the extension's servers are mcpServers in its gemini-extension.json,
//     the same shape as settings.json;
//   - system settings: $GEMINI_CLI_SYSTEM_SETTINGS_PATH, else
//     /etc/gemini-cli/settings.json (Linux), /Library/Application
//     Support/GeminiCli/settings.json (macOS),
//     C:\ProgramData\gemini-cli\settings.json (Windows); system defaults
//     beside it (system-defaults.json) or $GEMINI_CLI_SYSTEM_DEFAULTS_PATH.

// geminiDir is the Gemini CLI's .gemini folder.
func (e Env) geminiDir() (string, error) {
	if h := e.getenv("GEMINI_CLI_HOME"); h != "" {
		if !filepath.IsAbs(h) {
			return "", errors.New("GEMINI_CLI_HOME is not an absolute path: mcpseal cannot tell which folder the Gemini CLI reads")
		}
		return filepath.Join(h, ".gemini"), nil
	}
	return filepath.Join(e.Home, ".gemini"), nil
}

// geminiSettings is the Gemini CLI's user settings file, or a File that
// reports why it cannot be found.
func (e Env) geminiSettings() File {
	dir, err := e.geminiDir()
	if err != nil {
		return indexError("gemini", filepath.Join(e.Home, ".gemini", "settings.json"), "", err.Error())
	}
	return File{Client: "gemini", Path: filepath.Join(dir, "settings.json"), Shape: ShapeMCPServers}
}

// geminiSystemFiles are the settings an administrator sets for every
// user: counted, never edited.
func (e Env) geminiSystemFiles() []File {
	settings := e.getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
	if settings == "" {
		switch e.GOOS {
		case "darwin":
			settings = "/Library/Application Support/GeminiCli/settings.json"
		case "windows":
			settings = `C:\ProgramData\gemini-cli\settings.json`
		default:
			settings = "/etc/gemini-cli/settings.json"
		}
	}
	defaults := e.getenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
	if defaults == "" {
		defaults = filepath.Join(filepath.Dir(settings), "system-defaults.json")
	}
	const why = "system settings an administrator owns: wrap does not edit them"
	var out []File
	for _, p := range []string{settings, defaults} {
		if !filepath.IsAbs(p) {
			out = append(out, indexError("gemini", p, "system settings", "the system settings path is not absolute"))
			continue
		}
		out = append(out, File{Client: "gemini", Path: p, Shape: ShapeMCPServers, Source: "system settings", NoWrap: why})
	}
	return out
}

// geminiInstallRecord is the name of an extension's install record.
const geminiInstallRecord = ".gemini-extension-install.json"

// GeminiExtensionFiles lists the gemini-extension.json of every Gemini
// CLI extension, linked or installed, marking the ones disabled for the
// folder e.Dir (geminienable.go).
func GeminiExtensionFiles(e Env) []File {
	dir, err := e.geminiDir()
	if err != nil {
		return nil // geminiSettings reports it
	}
	exts := filepath.Join(dir, "extensions")
	dirs, err := subdirs(exts)
	if err != nil {
		return []File{indexError("gemini", exts, "extensions", "cannot list the extensions: "+errText(err))}
	}
	var out []File
	enablement := filepath.Join(exts, geminiEnablementFile)
	enabled, err := readGeminiEnablement(enablement)
	if err != nil {
		// The servers are counted as the CLI starts them when it cannot
		// read the file either: all of them.
		out = append(out, indexError("gemini", enablement, "extensions", "cannot tell which extensions are disabled: "+errText(err)))
	}
	for _, d := range dirs {
		f, ok := geminiExtension(exts, d)
		if !ok {
			continue
		}
		if f.err == "" && len(enabled) > 0 {
			// The CLI keys the file by the name in gemini-extension.json.
			if root, present, err := readIndex(f.Path, maxIndexSize); err == nil && present {
				if name, ok, err := stringMember(root, "name"); err == nil && ok {
					f.Disabled = enabled.disabledIn(name, e.Dir)
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// geminiExtension is the server file of the extension in folder d; ok is
// false for a folder that holds no extension.
func geminiExtension(exts, d string) (File, bool) {
	name := filepath.Base(d)
	source := "extension " + name
	rec := filepath.Join(d, geminiInstallRecord)
	f := File{Client: "gemini", Path: filepath.Join(d, "gemini-extension.json"), Shape: ShapeMCPServers, Source: source,
		NoWrap: "an installed copy of a Gemini CLI extension, replaced when the extension updates: wrap does not edit it", namePrefix: "extension:" + name + ":"}
	idx, present, err := readIndex(rec, maxIndexSize)
	if err != nil {
		return indexError("gemini", rec, source, "cannot read the extension's install record: "+errText(err)), true
	}
	linked := false
	if present {
		typ, _, err := stringMember(idx, "type")
		if err != nil {
			return indexError("gemini", rec, source, "the extension's install record: "+err.Error()), true
		}
		if typ == "link" {
			src, ok, err := stringMember(idx, "source")
			switch {
			case err != nil:
				return indexError("gemini", rec, source, "the extension's install record: "+err.Error()), true
			case !ok || !filepath.IsAbs(src):
				return indexError("gemini", rec, source, "a linked extension whose source is not an absolute path"), true
			}
			linked = true
			f.Path = filepath.Join(filepath.Clean(src), "gemini-extension.json")
			f.NoWrap = userFileWhyNot(f.Path, exts, "a linked extension's file")
		}
	}
	if _, err := os.Stat(f.Path); err != nil {
		if !linked && !present {
			return File{}, false // not an extension folder
		}
		return indexError("gemini", f.Path, source, "the extension's gemini-extension.json cannot be read: "+errText(err)), true
	}
	return f, true
}

// errText is an error's text without the path an *fs.PathError adds
// (the caller names the file).
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
