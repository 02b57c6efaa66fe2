package tlog

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// MaxCheckpointNote bounds a signed checkpoint: the body is under 260
// bytes and each signature line under 250, so 16 KiB holds the log's
// signature and dozens of witness cosignatures.
const MaxCheckpointNote = 16 << 10

// maxSignatures bounds the signature lines of a checkpoint.
const maxSignatures = 64

// A SignedCheckpoint is a checkpoint whose log signature verified.
type SignedCheckpoint struct {
	Checkpoint
	// Note is the whole signed note, as read.
	Note []byte
	// Witnesses lists the witnesses whose cosignatures verified, with the
	// time each one signed.
	Witnesses []Cosignature
	// Unverified counts signatures from keys the verifier does not know.
	Unverified int
}

// A Cosignature is one verified witness cosignature.
type Cosignature struct {
	Name string
	Time time.Time
}

// A SignatureError reports a checkpoint that is not signed by the pinned
// key, or whose witness cosignatures fail.
type SignatureError struct{ Reason string }

func (e *SignatureError) Error() string { return "tlog: checkpoint signature: " + e.Reason }

// OpenCheckpoint parses a signed checkpoint and checks it: it must be a
// canonical signed note (one "— name base64" line per signature, no key
// twice), carry a valid signature by logKey whose name is the origin, and
// every cosignature by a known witness must verify. At least quorum known
// witnesses must have cosigned.
func OpenCheckpoint(msg []byte, logKey note.Verifier, witnesses []note.Verifier, quorum int) (*SignedCheckpoint, error) {
	if len(msg) > MaxCheckpointNote {
		return nil, ErrMalformedCheckpoint
	}
	if err := canonicalNote(msg); err != nil {
		return nil, err
	}
	known := map[uint32]*cosignVerifier{}
	vs := []note.Verifier{logKey}
	for _, w := range witnesses {
		vs = append(vs, w)
		if cv, ok := w.(*cosignVerifier); ok {
			known[cv.hash] = cv
		}
	}
	n, err := note.Open(msg, note.VerifierList(vs...))
	var ue *note.UnverifiedNoteError
	var ie *note.InvalidSignatureError
	switch {
	case errors.As(err, &ue):
		return nil, &SignatureError{Reason: "not signed by the pinned log key"}
	case errors.As(err, &ie):
		return nil, &SignatureError{Reason: fmt.Sprintf("invalid signature by %s", ie.Name)}
	case err != nil:
		return nil, ErrMalformedCheckpoint
	}
	c, err := ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return nil, err
	}
	sc := &SignedCheckpoint{Checkpoint: c, Note: bytes.Clone(msg), Unverified: len(n.UnverifiedSigs)}
	logSigned := false
	for _, s := range n.Sigs {
		if s.Name == logKey.Name() && s.Hash == logKey.KeyHash() {
			logSigned = true
			continue
		}
		cs := Cosignature{Name: s.Name}
		if _, ok := known[s.Hash]; ok {
			raw, _ := base64.StdEncoding.DecodeString(s.Base64)
			cs.Time = time.Unix(int64(binary.BigEndian.Uint64(raw[4:12])), 0).UTC()
		}
		sc.Witnesses = append(sc.Witnesses, cs)
	}
	if !logSigned {
		return nil, &SignatureError{Reason: "not signed by the pinned log key"}
	}
	if c.Origin != logKey.Name() {
		return nil, &SignatureError{Reason: "the checkpoint's origin is not the key's name"}
	}
	if len(sc.Witnesses) < quorum {
		return nil, &SignatureError{Reason: fmt.Sprintf("%d of the %d required witness cosignatures", len(sc.Witnesses), quorum)}
	}
	return sc, nil
}

// canonicalNote checks the shape of a signed note: text, a blank line,
// then signature lines "— <name> <base64>" in strict base64, at most
// maxSignatures, no (name, key hash) twice.
func canonicalNote(msg []byte) error {
	i := bytes.LastIndex(msg, []byte("\n\n"))
	if i < 0 || i+2 >= len(msg) || !bytes.HasSuffix(msg, []byte("\n")) {
		return ErrMalformedCheckpoint
	}
	lines := strings.Split(string(msg[i+2:len(msg)-1]), "\n")
	if len(lines) == 0 || len(lines) > maxSignatures {
		return ErrMalformedCheckpoint
	}
	seen := map[string]bool{}
	for _, l := range lines {
		rest, ok := strings.CutPrefix(l, "— ")
		name, b64, ok2 := strings.Cut(rest, " ")
		if !ok || !ok2 || name == "" || strings.ContainsAny(name, " +") {
			return ErrMalformedCheckpoint
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil || len(raw) < 4 || base64.StdEncoding.EncodeToString(raw) != b64 {
			return ErrMalformedCheckpoint
		}
		id := name + "\x00" + string(raw[:4])
		if seen[id] {
			return ErrMalformedCheckpoint
		}
		seen[id] = true
	}
	return nil
}

// SignCheckpoint signs c with the log's signer.
func SignCheckpoint(c Checkpoint, s note.Signer) ([]byte, error) {
	if s.Name() != c.Origin {
		return nil, errors.New("tlog: the key's name is not the log's origin")
	}
	return note.Sign(&note.Note{Text: string(c.Format())}, s)
}

// AddCosignatures merges the signature lines of cosigned (the same
// checkpoint, as a witness returned it) into signed, verifying each
// against witnesses first. Lines from unknown keys are refused.
func AddCosignatures(signed, cosigned []byte, logKey note.Verifier, witnesses []note.Verifier) ([]byte, error) {
	a, err := OpenCheckpoint(signed, logKey, witnesses, 0)
	if err != nil {
		return nil, err
	}
	if err := canonicalNote(cosigned); err != nil {
		return nil, err
	}
	bodyEnd := bytes.LastIndex(cosigned, []byte("\n\n")) + 1
	if !bytes.Equal(cosigned[:bodyEnd], a.Format()) {
		return nil, errors.New("tlog: the cosigned checkpoint is not this checkpoint")
	}
	wn, err := note.Open(cosigned, note.VerifierList(witnesses...))
	if err != nil {
		return nil, &SignatureError{Reason: "no cosignature by a known witness verified"}
	}
	out := bytes.Clone(signed)
	for _, s := range wn.Sigs {
		line := "— " + s.Name + " " + s.Base64 + "\n"
		if !bytes.Contains(out, []byte(line)) {
			out = append(out, line...)
		}
	}
	if _, err := OpenCheckpoint(out, logKey, witnesses, 0); err != nil {
		return nil, err
	}
	return out, nil
}
