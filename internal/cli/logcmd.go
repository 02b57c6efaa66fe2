package cli

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"

	"github.com/mcpseal/mcpseal/internal/atomicfile"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/tlog"
)

// This file holds `mcpseal log`: the transparency log of server contracts
// (see docs/transparency-log.md and package tlog).

func init() { register(newLogCmd) }

func newLogCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Create, extend and verify a transparency log of server contracts",
		Long: `A tiled Merkle log (C2SP tlog-tiles) of observed server contracts, with
checkpoints signed as notes (Ed25519). The signing key stays under
$MCPSEAL_HOME/keys/, never in the log folder. Anyone holding the verifier
key can check a copy of the log without trusting whoever serves it:

    mcpseal log verify DIR --key log.pub`,
		Args: exactArgs(0, "a subcommand"),
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newLogInitCmd(e), newLogAppendCmd(e), newLogCheckpointCmd(e), newLogProveCmd(e), newLogVerifyCmd(e))
	return cmd
}

func mcpsealHome(e *env) (string, error) {
	home, err := pin.DefaultHome(e.getenv)
	if err != nil {
		return "", withHint(err, "set MCPSEAL_HOME to an absolute path")
	}
	return home, nil
}

func newLogInitCmd(e *env) *cobra.Command {
	var origin, pubOut string
	cmd := &cobra.Command{
		Use:   "init DIR --pub-out FILE [--origin NAME]",
		Short: "Create an empty log in DIR and its signing key",
		Long: `Create an empty log in DIR (created if missing), generate its Ed25519
signing key under $MCPSEAL_HOME/keys/ and write the verifier key, which
verifiers pin, to FILE. NAME is the log's origin, e.g. example.org/mcp-log;
without --origin it is HOST/FOLDER (this machine's host name and DIR's
base name, other characters replaced by -), and the command prints it.`,
		Args: exactArgs(1, "one log folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if pubOut == "" {
				return &usageError{errors.New("log init needs --pub-out FILE: where to write the verifier key")}
			}
			if origin == "" {
				o, err := defaultOrigin(args[0])
				if err != nil {
					return err
				}
				origin = o
				fmt.Fprintf(e.stdout, "origin: %s (from the host and folder names; --origin chooses another)\n", origin)
			}
			return runLogInit(e, args[0], origin, pubOut)
		},
	}
	cmd.Flags().StringVar(&origin, "origin", "", "the log's name (1-128 of A-Z a-z 0-9 . _ / -; default HOST/FOLDER)")
	cmd.Flags().StringVar(&pubOut, "pub-out", "", "where to write the verifier key")
	return cmd
}

// defaultOrigin names a log after this machine and its folder,
// HOST/FOLDER, each reduced to the characters an origin may hold.
func defaultOrigin(dir string) (string, error) {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	origin := originPart(host) + "/" + originPart(filepath.Base(abs))
	if !tlog.ValidOrigin(origin) || strings.HasSuffix(origin, "/") {
		return "", &usageError{errors.New("cannot name the log from the host and folder names; give --origin NAME")}
	}
	return origin, nil
}

// originPart keeps the characters an origin may hold (A-Z a-z 0-9 . _ -),
// replacing others with -, and trims what may not start it; at most 60.
func originPart(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	out := strings.TrimLeft(string(b), "._-")
	if len(out) > 60 {
		out = out[:60]
	}
	return out
}

func runLogInit(e *env, dir, origin, pubOut string) error {
	home, err := mcpsealHome(e)
	if err != nil {
		return err
	}
	if !tlog.ValidOrigin(origin) {
		return &usageError{errors.New("invalid --origin: use 1 to 128 of A-Z a-z 0-9 . _ / -, starting with a letter or digit")}
	}
	if _, err := os.Stat(filepath.Join(dir, tlog.CheckpointFile)); err == nil {
		return fmt.Errorf("%s already holds a log", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	vkey, err := tlog.GenerateKey(rand.Reader, home, origin)
	if err != nil {
		return withHint(err, "each origin has one key; pick another --origin, or remove the old key if its log is gone")
	}
	if err := tlog.WriteFileAtomic(pubOut, []byte(vkey+"\n"), 0o644); err != nil {
		return err
	}
	signer, key, err := tlog.LoadSigner(home, origin)
	if err != nil {
		return err
	}
	d, err := tlog.OpenDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	sc, err := tlog.NewWriter(d, signer, key).Init()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created log %s in %s\nverifier key: %s (written to %s)\nsigning key: %s\n",
		sc.Origin, dir, vkey, pubOut, tlog.KeyPath(home, origin))
	return nil
}

// openLogWriter opens the log in dir with the signing key its checkpoint
// names.
func openLogWriter(e *env, dir string) (*tlog.Dir, *tlog.Writer, error) {
	home, err := mcpsealHome(e)
	if err != nil {
		return nil, nil, err
	}
	d, err := tlog.OpenDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the log: %w", err)
	}
	origin, err := logOrigin(d)
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	signer, key, err := tlog.LoadSigner(home, origin)
	if err != nil {
		d.Close()
		return nil, nil, withHint(err, "only the machine that ran 'mcpseal log init' for this log can write to it")
	}
	return d, tlog.NewWriter(d, signer, key), nil
}

// logOrigin reads the origin line of dir's checkpoint (not yet verified:
// it only picks which key to load, and that key then checks it).
func logOrigin(d *tlog.Dir) (string, error) {
	msg, err := d.ReadFile(tlog.CheckpointFile, tlog.MaxCheckpointNote)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errors.New("the folder holds no log (no checkpoint); run 'mcpseal log init' first")
	}
	if err != nil {
		return "", err
	}
	for i, c := range msg {
		if c == '\n' {
			if o := string(msg[:i]); tlog.ValidOrigin(o) {
				return o, nil
			}
			break
		}
	}
	return "", errors.New("the log's checkpoint is malformed")
}

func newLogCheckpointCmd(e *env) *cobra.Command {
	var cosigs string
	var witnesses []string
	cmd := &cobra.Command{
		Use:   "checkpoint DIR [--cosignatures FILE --witness KEYFILE...]",
		Short: "Print the log's signed checkpoint, or add witness cosignatures to it",
		Args:  exactArgs(1, "one log folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, w, err := openLogWriter(e, args[0])
			if err != nil {
				return err
			}
			defer d.Close()
			cur, err := w.Current()
			if err != nil {
				return err
			}
			if cosigs == "" {
				_, err := e.stdout.Write(cur.Note)
				return err
			}
			ws, err := readWitnesses(witnesses)
			if err != nil {
				return err
			}
			if len(ws) == 0 {
				return &usageError{errors.New("--cosignatures needs the witnesses' keys (--witness)")}
			}
			b, err := readLimited(cosigs, tlog.MaxCheckpointNote)
			if err != nil {
				return err
			}
			merged, err := tlog.AddCosignatures(cur.Note, b, w.Key(), ws)
			if err != nil {
				return err
			}
			if err := w.ReplaceCheckpoint(merged, ws); err != nil {
				return err
			}
			_, err = e.stdout.Write(merged)
			return err
		},
	}
	cmd.Flags().StringVar(&cosigs, "cosignatures", "", "a copy of the checkpoint cosigned by witnesses")
	cmd.Flags().StringArrayVar(&witnesses, "witness", nil, "a witness's verifier key file (cosignature/v1); repeatable")
	return cmd
}

func readWitnesses(files []string) ([]note.Verifier, error) {
	var out []note.Verifier
	for _, f := range files {
		v, err := tlog.ReadWitnessFile(f)
		if err != nil {
			return nil, fmt.Errorf("witness key %s: %w", f, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func parseIndex(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
		return 0, &usageError{fmt.Errorf("%q is not an entry index", s)}
	}
	return n, nil
}

func newLogAppendCmd(e *env) *cobra.Command {
	var obsFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "append DIR --observation FILE [--json]",
		Short: "Record an observed contract; a new entry only when it changed",
		Long: `Read an observation (docs/transparency-log.md: the server's identity,
package, time, protocol version and definitions exactly as listed), verify
the log, and append an entry and a new signed checkpoint only when the
server's contract differs from its latest entry. The definitions are
stored content-addressed under DIR/defs/.`,
		Args: exactArgs(1, "one log folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if obsFile == "" {
				return &usageError{errors.New("log append needs --observation FILE")}
			}
			return runLogAppend(e, args[0], obsFile, asJSON)
		},
	}
	cmd.Flags().StringVar(&obsFile, "observation", "", "the observation file (JSON)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// logAppendJSON is the output of log append --json.
type logAppendJSON struct {
	Version  int    `json:"version"`
	Server   string `json:"server"`
	Appended bool   `json:"appended"`
	// Index is the new entry's index, or the latest entry's when the
	// contract is unchanged.
	Index    int64  `json:"index"`
	Contract string `json:"contract"`
	Size     int64  `json:"size"`
}

func runLogAppend(e *env, dir, obsFile string, asJSON bool) error {
	b, err := readLimited(obsFile, tlog.MaxObservationFile)
	if err != nil {
		return err
	}
	obs, err := tlog.ParseObservation(b)
	if err != nil {
		return fmt.Errorf("reading %s: %w", obsFile, err)
	}
	d, w, err := openLogWriter(e, dir)
	if err != nil {
		return err
	}
	defer d.Close()
	v, err := tlog.Verify(d, tlog.VerifyOptions{Key: w.Key()})
	if err != nil {
		return withHint(fmt.Errorf("the log does not verify; nothing was appended: %w", err), "run 'mcpseal log verify %s --key FILE'", dir)
	}
	entry, err := v.EntryFor(obs)
	if err != nil {
		return err
	}
	out := logAppendJSON{Version: jsonVersion, Server: obs.Server, Contract: obs.Contract.Digests().Contract, Size: v.Checkpoint.Size}
	if entry == nil {
		h := v.History(obs.Server)
		out.Index = int64(h[len(h)-1])
	} else {
		raw, err := entry.Marshal()
		if err != nil {
			return err
		}
		if err := tlog.PutContract(d, obs.Contract); err != nil {
			return err
		}
		sc, err := w.Append([][]byte{raw})
		if err != nil {
			return err
		}
		out.Appended, out.Index, out.Size = true, sc.Size-1, sc.Size
	}
	if asJSON {
		return writeJSON(e.stdout, out)
	}
	if out.Appended {
		fmt.Fprintf(e.stdout, "appended entry %d for %s (contract %s); the log has %d entries\n", out.Index, out.Server, out.Contract[:16], out.Size)
	} else {
		fmt.Fprintf(e.stdout, "unchanged: %s still serves contract %s (entry %d); nothing appended\n", out.Server, out.Contract[:16], out.Index)
	}
	return nil
}

func newLogProveCmd(e *env) *cobra.Command {
	var asJSON bool
	var keyFile string
	cmd := &cobra.Command{
		Use:   "prove DIR INDEX [--key FILE] [--json]",
		Short: "Print the inclusion proof of one entry against the current checkpoint",
		Long: `Build the inclusion proof of entry INDEX from the tiles, each checked
against the signed checkpoint. The checkpoint is checked with the verifier
key in FILE, or, without --key, with this machine's signing key of the log.`,
		Args: exactArgs(2, "a log folder and an entry index"),
		RunE: func(cmd *cobra.Command, args []string) error {
			i, err := parseIndex(args[1])
			if err != nil {
				return err
			}
			return runLogProve(e, args[0], keyFile, i, asJSON)
		},
	}
	cmd.Flags().StringVar(&keyFile, "key", "", "the log's verifier key file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// logProveJSON is the output of log prove --json. Hashes are standard
// base64, as in checkpoints; the proof checks with x/mod's
// tlog.CheckRecord(proof, size, root, index, leaf).
type logProveJSON struct {
	Version    int         `json:"version"`
	Index      int64       `json:"index"`
	Size       int64       `json:"size"`
	Root       tlog.Hash   `json:"root"`
	Leaf       tlog.Hash   `json:"leaf"`
	Proof      []tlog.Hash `json:"proof"`
	Checkpoint string      `json:"checkpoint"`
	Entry      string      `json:"entry"`
}

func runLogProve(e *env, dir, keyFile string, i int64, asJSON bool) error {
	var key note.Verifier
	if keyFile != "" {
		k, err := tlog.ReadVerifierFile(keyFile)
		if err != nil {
			return fmt.Errorf("reading the verifier key: %w", err)
		}
		key = k
	}
	d, w, err := openLogWriter(e, dir)
	switch {
	case err != nil && key == nil:
		return err
	case err != nil:
		if d, err = tlog.OpenDir(dir); err != nil {
			return err
		}
	default:
		if key == nil {
			key = w.Key()
		}
	}
	defer d.Close()
	msg, err := d.ReadFile(tlog.CheckpointFile, tlog.MaxCheckpointNote)
	if err != nil {
		return err
	}
	cur, err := tlog.OpenCheckpoint(msg, key, nil, 0)
	if err != nil {
		return err
	}
	entry, err := tlog.ReadEntry(d, cur.Size, i)
	if err != nil {
		return err
	}
	p, err := tlog.Prove(d, cur.Checkpoint, i, entry)
	if err != nil {
		return err
	}
	out := logProveJSON{Version: jsonVersion, Index: i, Size: p.Size, Root: p.Root, Leaf: p.Leaf, Proof: p.Proof,
		Checkpoint: string(cur.Note), Entry: string(entry)}
	if out.Proof == nil {
		out.Proof = []tlog.Hash{}
	}
	if asJSON {
		return writeJSON(e.stdout, out)
	}
	fmt.Fprintf(e.stdout, "entry %d of %d\nleaf %s\nroot %s\n", i, p.Size, p.Leaf, p.Root)
	for _, h := range p.Proof {
		fmt.Fprintf(e.stdout, "proof %s\n", h)
	}
	return nil
}

// readLimited reads a local file a person names, of at most limit bytes;
// a FIFO or device is refused without blocking.
func readLimited(path string, limit int64) ([]byte, error) {
	b, err := atomicfile.ReadFileFollow(path, limit)
	if errors.Is(err, atomicfile.ErrTooLarge) {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, err
}

func newLogVerifyCmd(e *env) *cobra.Command {
	var o logVerifyOpts
	cmd := &cobra.Command{
		Use:   "verify DIR --key FILE [--witness FILE...] [--quorum N] [--entry N...] [--json]",
		Short: "Verify a copy of a log against a pinned verifier key",
		Long: `Check a log folder without trusting whoever served it: the checkpoint's
signature against the verifier key in FILE (never a key from the
download), every entry and every tile, every stored definition, the
inclusion proof of each --entry, the cosignatures of known witnesses, and
that the log extends the last checkpoint this machine accepted for that
key (kept under $MCPSEAL_HOME/tlog/seen/). A log that forked, shrank or
rewrote its history fails with both checkpoints saved as evidence under
$MCPSEAL_HOME/tlog/evidence/.`,
		Args: exactArgs(1, "one log folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.key == "" {
				return &usageError{errors.New("log verify needs --key FILE: the verifier key you pinned for this log")}
			}
			o.dir = args[0]
			return runLogVerify(e, o)
		},
	}
	cmd.Flags().StringVar(&o.key, "key", "", "the log's verifier key file (pin it from a trusted source)")
	cmd.Flags().StringArrayVar(&o.witnesses, "witness", nil, "a witness's verifier key file; repeatable")
	cmd.Flags().IntVar(&o.quorum, "quorum", 0, "how many known witnesses must have cosigned")
	cmd.Flags().StringArrayVar(&o.entries, "entry", nil, "an entry index to prove included; repeatable")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	addStateFlag(cmd, &o.state)
	return cmd
}

type logVerifyOpts struct {
	dir, key  string
	state     string // the state database keeping the accepted checkpoints
	witnesses []string
	quorum    int
	entries   []string
	asJSON    bool
}

// logVerifyJSON is the output of log verify --json.
type logVerifyJSON struct {
	Version   int                `json:"version"`
	OK        bool               `json:"ok"`
	Origin    string             `json:"origin,omitempty"`
	Size      int64              `json:"size"`
	Root      *tlog.Hash         `json:"root,omitempty"`
	Servers   int                `json:"servers"`
	Witnesses []logWitnessJSON   `json:"witnesses"`
	Previous  *logCheckpointJSON `json:"previous"`
	Proved    []int64            `json:"proved"`
	Faults    []tlog.Fault       `json:"faults"`
	Fork      *logForkJSON       `json:"fork"`
	// Error is set when the log could not be checked at all (signature,
	// unreadable folder).
	Error string   `json:"error,omitempty"`
	Notes []string `json:"notes"`
}

type logWitnessJSON struct {
	Name string    `json:"name"`
	Time time.Time `json:"time"`
}

type logCheckpointJSON struct {
	Size int64     `json:"size"`
	Root tlog.Hash `json:"root"`
}

type logForkJSON struct {
	Reason   string `json:"reason"`
	Seen     string `json:"seen"`
	Got      string `json:"got"`
	Evidence string `json:"evidence"`
}

func runLogVerify(e *env, o logVerifyOpts) error {
	home, err := mcpsealHome(e)
	if err != nil {
		return err
	}
	key, err := tlog.ReadVerifierFile(o.key)
	if err != nil {
		return fmt.Errorf("reading the verifier key: %w", err)
	}
	ws, err := readWitnesses(o.witnesses)
	if err != nil {
		return err
	}
	seen, closeSeen, err := seenStore(e, o.state, home)
	if err != nil {
		return err
	}
	defer closeSeen()
	opts := tlog.VerifyOptions{Key: key, Witnesses: ws, Quorum: o.quorum, Seen: seen}
	for _, s := range o.entries {
		i, err := parseIndex(s)
		if err != nil {
			return err
		}
		opts.Prove = append(opts.Prove, i)
	}
	d, err := tlog.OpenDir(o.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	v, verr := tlog.Verify(d, opts)
	out := logVerifyJSON{Version: jsonVersion, OK: verr == nil, Witnesses: []logWitnessJSON{}, Proved: []int64{}, Faults: []tlog.Fault{}, Notes: []string{}}
	var ve *tlog.VerifyError
	var fe *tlog.ForkError
	switch {
	case verr == nil:
		out.Origin, out.Size, out.Root, out.Servers = v.Checkpoint.Origin, v.Checkpoint.Size, &v.Checkpoint.Root, len(v.Servers())
		for _, w := range v.Checkpoint.Witnesses {
			out.Witnesses = append(out.Witnesses, logWitnessJSON{Name: w.Name, Time: w.Time})
		}
		if v.Previous != nil {
			out.Previous = &logCheckpointJSON{Size: v.Previous.Size, Root: v.Previous.Root}
		}
		out.Proved = append(out.Proved, opts.Prove...)
		out.Notes = append(out.Notes, v.Notes...)
		if n := v.Checkpoint.Unverified; n > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("%d checkpoint signatures by keys this verifier does not know were not checked (pass their keys with --witness)", n))
		}
	case errors.As(verr, &ve):
		out.Faults = ve.Faults
	case errors.As(verr, &fe):
		dir, err := saveEvidence(home, fe)
		if err != nil {
			return fmt.Errorf("saving the evidence of a fork: %w", err)
		}
		out.Fork = &logForkJSON{Reason: fe.Reason, Seen: string(fe.Seen.Note), Got: string(fe.Got.Note), Evidence: dir}
	default:
		out.Error = verr.Error()
	}
	if o.asJSON {
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
		if verr != nil {
			return exitWith(ExitFailure, nil)
		}
		return nil
	}
	return reportLogVerify(e, out, verr)
}

func reportLogVerify(e *env, out logVerifyJSON, verr error) error {
	switch {
	case out.Fork != nil:
		fmt.Fprintf(e.stdout, "FORK: the log does not extend the checkpoint this machine accepted before (%s)\n\n", out.Fork.Reason)
		fmt.Fprintf(e.stdout, "accepted before:\n%s\nserved now:\n%s\n", out.Fork.Seen, out.Fork.Got)
		return exitWith(ExitFailure, withHint(errors.New("the log forked: both checkpoints are validly signed by the log's key"),
			"the evidence is saved in %s; keep it, and report it to the log's operator and its witnesses", out.Fork.Evidence))
	case len(out.Faults) > 0:
		for _, f := range out.Faults {
			fmt.Fprintf(e.stdout, "fault: %s: %s\n", f.Path, f.Reason)
		}
		return exitWith(ExitFailure, errors.New("the log does not verify"))
	case verr != nil:
		return exitWith(ExitFailure, verr)
	}
	for _, n := range out.Notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	fmt.Fprintf(e.stdout, "log OK: %s, %d entries, %d servers, root %s\n", out.Origin, out.Size, out.Servers, out.Root)
	for _, w := range out.Witnesses {
		fmt.Fprintf(e.stdout, "cosigned by %s at %s\n", w.Name, w.Time.Format(time.RFC3339))
	}
	for _, i := range out.Proved {
		fmt.Fprintf(e.stdout, "entry %d: included\n", i)
	}
	if out.Previous == nil {
		fmt.Fprintf(e.stdout, "first verification of this log here: its checkpoint is remembered, and later copies must extend it\n")
	} else {
		fmt.Fprintf(e.stdout, "extends the checkpoint accepted before (%d entries)\n", out.Previous.Size)
	}
	return nil
}

// saveEvidence writes both checkpoints of a fork under
// $MCPSEAL_HOME/tlog/evidence/ and returns the folder.
func saveEvidence(home string, fe *tlog.ForkError) (string, error) {
	dir := filepath.Join(home, "tlog", "evidence",
		fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(fe.Got.Origin, "/", "_"), fe.Got.Size, time.Now().UnixNano()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := tlog.WriteFileAtomic(filepath.Join(dir, "seen.checkpoint"), fe.Seen.Note, 0o600); err != nil {
		return "", err
	}
	return dir, tlog.WriteFileAtomic(filepath.Join(dir, "got.checkpoint"), fe.Got.Note, 0o600)
}
