package tlog

import (
	"errors"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

func TestAppendProveVerify(t *testing.T) {
	t.Parallel()
	k := newKey(t, "example.org/log")
	st, w := newLog(t, k)
	v, err := Verify(st, VerifyOptions{Key: k.key})
	if err != nil {
		t.Fatalf("empty log: %v", err)
	}
	if v.Checkpoint.Size != 0 || v.Checkpoint.Root != referenceRoot(nil) {
		t.Fatalf("empty log checkpoint %v", v.Checkpoint.Checkpoint)
	}
	// Batches that end inside a bundle, exactly on one, and span several.
	total := 0
	for _, n := range []int{1, 254, 1, 3, 256, 300, 1} {
		sc := appendN(t, st, w, total, n)
		total += n
		if sc.Size != int64(total) {
			t.Fatalf("size %d, want %d", sc.Size, total)
		}
		v, err := Verify(st, VerifyOptions{Key: k.key, Prove: []int64{0, int64(total - 1)}})
		if err != nil {
			t.Fatalf("after %d entries: %v", total, err)
		}
		if got, want := v.Checkpoint.Root, referenceRoot(v.Entries); got != want {
			t.Fatalf("root after %d entries is not RFC 6962's", total)
		}
	}
	v, err = Verify(st, VerifyOptions{Key: k.key})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Entries) != total || len(v.Notes) != 0 {
		t.Fatalf("%d entries, notes %v", len(v.Entries), v.Notes)
	}
	// Every inclusion proof, built from the tiles, checks with x/mod's
	// own verifier; and fails for the wrong leaf or index.
	for i := int64(0); i < int64(total); i++ {
		p, err := Prove(st, v.Checkpoint.Checkpoint, i, v.Entries[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckRecord(p.Proof, p.Size, p.Root, p.Index, RecordHash(v.Entries[i])); err != nil {
			t.Fatalf("entry %d: tlog rejects our proof: %v", i, err)
		}
		other := v.Entries[(i+1)%int64(total)]
		if tlog.CheckRecord(p.Proof, p.Size, p.Root, p.Index, RecordHash(other)) == nil {
			t.Fatalf("entry %d: the proof also proves another entry", i)
		}
	}
	if _, err := Prove(st, v.Checkpoint.Checkpoint, int64(total), nil); err == nil {
		t.Fatal("proved an entry past the end")
	}
}

func TestAppendRefusesMalformedEntry(t *testing.T) {
	t.Parallel()
	k := newKey(t, "example.org/log")
	st, w := newLog(t, k)
	good := testEntry(t, st, 1)
	bad := append([]byte(" "), good...)
	if _, err := w.Append([][]byte{good, bad}); !errors.Is(err, ErrMalformedEntry) {
		t.Fatalf("err %v, want ErrMalformedEntry", err)
	}
	cur, err := w.Current()
	if err != nil || cur.Size != 0 {
		t.Fatalf("a refused batch changed the log: %v %v", cur, err)
	}
}

func TestInitRefusesExistingLog(t *testing.T) {
	t.Parallel()
	k := newKey(t, "example.org/log")
	st, _ := newLog(t, k)
	if _, err := NewWriter(st, k.signer, k.key).Init(); !errors.Is(err, ErrExists) {
		t.Fatalf("err %v, want ErrExists", err)
	}
}

func TestDirStorageRoundTrip(t *testing.T) {
	t.Parallel()
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	k := newKey(t, "example.org/log")
	w := NewWriter(d, k.signer, k.key)
	if _, err := w.Init(); err != nil {
		t.Fatal(err)
	}
	appendN(t, d, w, 0, 300)
	if _, err := Verify(d, VerifyOptions{Key: k.key, Prove: []int64{299}}); err != nil {
		t.Fatal(err)
	}
}
