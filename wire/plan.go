package wire

import (
	"errors"
	"fmt"
	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Action is what a plan does to one entry.
type Action string

// The actions of a plan.
const (
	Wrap   Action = "wrap"   // put mcpseal in front
	Update Action = "update" // add a missing flag, or point at this mcpseal
	Unwrap Action = "unwrap" // restore the original launch
	Keep   Action = "ok"     // nothing to do
	Skip   Action = "skip"   // left alone: asked for, or not a server mcpseal can front
	Refuse Action = "refuse" // cannot be done safely; Reason says why
)

// Change is the plan for one entry.
type Change struct {
	Entry  Entry
	Action Action
	Reason string
	// Before and After are the launch lines (command first); After is empty
	// when nothing changes.
	Before, After []string

	de         *docEntry
	newCommand string
	newArgs    []string
	fromRemote bool
	credential string // file to write the entry's headers to
	record     *Record
}

// FilePlan is the plan for one config file.
type FilePlan struct {
	File File
	// Err says why the file is left alone: unreadable, invalid, or an
	// edit that did not verify.
	Err     error
	Changes []*Change

	old, new []byte
}

// Writes reports whether applying the plan changes the file.
func (fp *FilePlan) Writes() bool { return fp.Err == nil && fp.new != nil }

// Plan is a wrap or unwrap over several files.
type Plan struct {
	Files []*FilePlan
	opts  Options
	recs  *Records
}

// PlanWrap plans putting mcpseal in front of every server in files.
func PlanWrap(files []File, o Options, recs *Records) *Plan {
	p := &Plan{opts: o, recs: recs}
	for _, f := range files {
		p.Files = append(p.Files, p.planFile(f, true))
	}
	return p
}

// PlanUnwrap plans restoring every wrapped server in files.
func PlanUnwrap(files []File, o Options, recs *Records) *Plan {
	p := &Plan{opts: o, recs: recs}
	for _, f := range files {
		p.Files = append(p.Files, p.planFile(f, false))
	}
	return p
}

func (p *Plan) planFile(f File, wrap bool) *FilePlan {
	fp := &FilePlan{File: f}
	if f.err != "" {
		fp.Err = errors.New(f.err)
		return fp
	}
	src, err := atomicfile.ReadFileFollow(f.Path, maxConfigSize)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		fp.Err = fmt.Errorf("cannot read: %w", err)
		return fp
	}
	fp.old = src
	doc, err := parseDocument(f, src)
	if err != nil {
		fp.Err = err
		return fp
	}
	var edits []edit
	for _, de := range doc.entries() {
		var c *Change
		switch {
		case f.NoWrap != "":
			// Neither wrap nor unwrap edits a file wrap may not write.
			c = &Change{Entry: de.Entry, de: de, Action: Skip, Reason: f.NoWrap}
		case wrap:
			c = p.wrapEntry(f, de)
		default:
			c = p.unwrapEntry(f, de, src)
		}
		fp.Changes = append(fp.Changes, c)
		if c.Action != Wrap && c.Action != Update && c.Action != Unwrap {
			continue
		}
		es, err := c.edits(src)
		if err != nil {
			fp.Err = err
			return fp
		}
		edits = append(edits, es...)
	}
	if len(edits) == 0 {
		return fp
	}
	out, err := applyEdits(src, edits)
	if err != nil {
		fp.Err = err
		return fp
	}
	after, err := parseDocument(f, out)
	if err != nil {
		fp.Err = errVerify
		return fp
	}
	if err := p.check(f, doc, after, fp.Changes, out); err != nil {
		fp.Err = err
		return fp
	}
	fp.new = out
	return fp
}

// edits returns the byte edits of one change.
func (c *Change) edits(src []byte) ([]edit, error) {
	switch {
	case c.record != nil && c.Action == Unwrap:
		return []edit{{c.de.start, c.de.end, c.record.Original}}, nil
	case c.fromRemote:
		return c.de.remote(c.newCommand, c.newArgs)
	default:
		return c.de.stdio(c.newCommand, c.newArgs)
	}
}

// check verifies the edited document against what the changes meant, and
// fills in the records.
func (p *Plan) check(f File, before, after document, changes []*Change, out []byte) error {
	want := map[string]map[string]any{}
	bv := before.value()
	av := after.value()
	for _, c := range changes {
		if c.Action != Wrap && c.Action != Update && c.Action != Unwrap {
			continue
		}
		k := c.de.key()
		ne := findEntry(after, k)
		if ne == nil {
			return errVerify
		}
		if c.record != nil && c.Action == Unwrap {
			if string(out[ne.start:ne.end]) != c.record.Original {
				return errVerify
			}
			m, ok := entryValue(av, c.de.where)
			if !ok {
				return errVerify
			}
			want[k] = m
			continue
		}
		m, ok := entryValue(deepCopy(bv), c.de.where)
		if !ok {
			return errVerify
		}
		c.de.expect(m, c.newCommand, c.newArgs, c.fromRemote)
		want[k] = m
		if c.Action == Unwrap {
			continue
		}
		rec := p.recs.find(f.Path, c.de.where)
		switch {
		case rec != nil:
			rec = &Record{File: rec.File, Entry: rec.Entry, Original: rec.Original, Credential: rec.Credential}
		case c.Action == Wrap:
			rec = &Record{File: f.Path, Entry: c.de.where, Original: string(before.(interface{ source() []byte }).source()[c.de.start:c.de.end])}
		default:
			continue // wrapped elsewhere: unwrap reads the launch line
		}
		rec.Wrapped = string(out[ne.start:ne.end])
		if c.credential != "" {
			rec.Credential = c.credential
		}
		c.record = rec
	}
	return verify(f, before, after, want)
}

func (d *jsonDoc) source() []byte { return d.src }
func (d *tomlDoc) source() []byte { return d.src }

func (p *Plan) wrapEntry(f File, de *docEntry) *Change {
	o := &p.opts
	c := &Change{Entry: de.Entry, de: de}
	switch de.Kind {
	case Other:
		c.Action, c.Reason = Skip, de.Why
	case Stdio:
		c.Before = append([]string{de.Command}, de.Args...)
		l := readLaunch(de.Command, de.Args, o.Self, o.Run)
		switch {
		case !l.Wrapped:
			c.Action, c.newCommand, c.newArgs = Wrap, o.Self, wrappedArgs(de.prefixed(f), o, c.Before)
		case l.Err != nil:
			c.Action, c.Reason = Refuse, "wrapped but broken (mcpseal would refuse this launch line); run 'mcpseal unwrap' and wrap it again"
		default:
			c.newCommand, c.newArgs = de.Command, de.Args
			var why []string
			if filepath.IsAbs(de.Command) && filepath.Clean(de.Command) != filepath.Clean(o.Self) {
				if _, err := os.Stat(de.Command); err != nil {
					c.newCommand = o.Self
					why = append(why, "points at an mcpseal that is gone")
				}
			}
			if ok, _ := isThisBinary(de.Command, de.Env, o.Self); !ok && c.newCommand != o.Self && l.NPX == "" {
				c.newCommand = o.Self
				why = append(why, "points at this mcpseal, not another file named mcpseal")
			}
			if a := missingFlags(de.Args, l, de.Env, o); a != nil {
				c.newArgs = a
				var added []string
				if o.Lock != "" && l.Line.Lock == "" {
					added = append(added, "--lock")
				}
				if lacksHome(l, de.Env, o) {
					added = append(added, "--home")
				}
				why = append(why, "adds "+strings.Join(added, " and "))
			}
			if len(why) == 0 {
				c.Action, c.Reason = Keep, "already wrapped"
				if o.Lock != "" && l.Line.Lock != o.Lock {
					c.Reason = "already wrapped with another --lock; left as it is"
				}
				return c
			}
			c.Action, c.Reason = Update, joinWhy(why)
		}
	case Remote:
		c.Before = []string{de.URL}
		switch {
		case o.SkipRemote:
			c.Action, c.Reason = Skip, "remote server (--skip-remote)"
		case !o.Run.Has("url"):
			c.Action, c.Reason = Refuse, "remote server: this mcpseal cannot run remote servers (its run command has no --url)"
		case de.Transport == "sse":
			c.Action, c.Reason = Refuse, "remote server over the old SSE transport: mcpseal run --url speaks Streamable HTTP"
		case de.EnvCredential != "":
			c.Action, c.Reason = Refuse, "remote server whose credential comes from "+de.EnvCredential+": wrap it by hand, or pass --skip-remote"
		case len(de.Headers) > 0 && !o.Run.Has("credential-file"):
			c.Action, c.Reason = Refuse, "remote server with headers: this mcpseal's run command has no --credential-file"
		default:
			if len(de.Headers) > 0 {
				c.credential = credentialPath(o.Home, f.Path, de.where)
			}
			c.Action, c.fromRemote = Wrap, true
			c.newCommand, c.newArgs = o.Self, remoteArgs(de.prefixed(f), de.URL, c.credential, o)
		}
	}
	if c.Action == Wrap || c.Action == Update {
		c.After = append([]string{c.newCommand}, c.newArgs...)
	}
	return c
}

func joinWhy(why []string) string {
	s := why[0]
	for _, w := range why[1:] {
		s += "; " + w
	}
	return s
}

func (p *Plan) unwrapEntry(f File, de *docEntry, src []byte) *Change {
	o := &p.opts
	c := &Change{Entry: de.Entry, de: de}
	if de.Kind != Stdio {
		c.Action, c.Reason = Keep, "not wrapped"
		if de.Kind == Other {
			c.Reason = de.Why
		}
		return c
	}
	c.Before = append([]string{de.Command}, de.Args...)
	l := readLaunch(de.Command, de.Args, o.Self, o.Run)
	if !l.Wrapped {
		c.Action, c.Reason = Keep, "not wrapped"
		return c
	}
	if rec := p.recs.find(f.Path, de.where); rec != nil && rec.Wrapped == string(src[de.start:de.end]) {
		c.Action, c.record, c.Reason = Unwrap, rec, "restored from the record of the original entry"
		return c
	}
	argv := l.Line.Argv
	if l.Err != nil || l.Line.URL != "" {
		argv = nil
		for i, a := range de.Args {
			if a == "--" {
				argv = de.Args[i+1:]
				break
			}
		}
	}
	if len(argv) == 0 {
		c.Action, c.Reason = Refuse, "the entry changed since wrap and its launch line holds no original command; restore it from a backup in $MCPSEAL_HOME/backups"
		return c
	}
	c.Action, c.Reason = Unwrap, "restored from the launch line (the entry changed since wrap, or was wrapped elsewhere)"
	c.newCommand, c.newArgs = argv[0], argv[1:]
	c.After = append([]string{}, argv...)
	return c
}

// Apply writes every file of the plan: a backup of each first, then the
// credential files, then the file itself (atomically), then the records.
// It returns the backup folder ("" when nothing was written). A file that
// fails is reported in its FilePlan.Err; the others are still written.
func (p *Plan) Apply() (string, error) {
	now := time.Now
	if p.opts.Now != nil {
		now = p.opts.Now
	}
	dir := ""
	var failed error
	for _, fp := range p.Files {
		if !fp.Writes() {
			continue
		}
		if dir == "" {
			d, err := backupDir(p.opts.Home, now())
			if err != nil {
				return "", fmt.Errorf("creating the backup folder: %w", err)
			}
			dir = d
		}
		if err := writeFileAtomic(backupPath(dir, fp.File.Path), fp.old, 0o600); err != nil {
			fp.Err = fmt.Errorf("backing up: %w", err)
			failed = fp.Err
			continue
		}
		if err := p.writeCredentials(fp); err != nil {
			fp.Err = err
			failed = err
			continue
		}
		if err := replaceConfig(fp.File.Path, fp.old, fp.new); err != nil {
			for _, c := range fp.Changes {
				if c.credential != "" && c.Action == Wrap {
					os.Remove(c.credential) // the config still holds the headers
				}
			}
			fp.Err = err
			failed = err
			continue
		}
		for _, c := range fp.Changes {
			switch {
			case c.Action == Unwrap:
				if rec := p.recs.find(fp.File.Path, c.de.where); rec != nil && rec.Credential != "" {
					os.Remove(rec.Credential)
				}
				p.recs.drop(fp.File.Path, c.de.where)
			case c.record != nil:
				c.record.At = now().UTC()
				p.recs.put(c.record)
			}
		}
		if err := p.recs.save(p.opts.Home); err != nil {
			return dir, fmt.Errorf("saving the wrap records: %w", err)
		}
	}
	return dir, failed
}

func (p *Plan) writeCredentials(fp *FilePlan) error {
	for _, c := range fp.Changes {
		if c.credential == "" || c.Action != Wrap {
			continue
		}
		data, err := jsonIndent(Credential{Version: 1, Headers: c.Entry.Headers})
		if err != nil {
			return err
		}
		if err := writeFileAtomic(c.credential, data, 0o600); err != nil {
			return fmt.Errorf("writing the credential file: %w", err)
		}
	}
	return nil
}
