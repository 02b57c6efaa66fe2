package site

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/mcpseal/mcpseal/tlog"
)

// maxLogFile bounds any one file copied from the log folder: entry bundles
// are at most 16 MiB, definitions 1 MiB, liveness 32 MiB.
const maxLogFile = 32 << 20

// copyLog copies the verified log's files into out/log and out/log.tar.gz,
// then verifies the copy against the same key: what is published is
// exactly a log that verifies, whatever changed in the folder meanwhile.
func copyLog(v *tlog.Verified, st tlog.Storage, out string, opts Options) error {
	names := []string{tlog.CheckpointFile}
	for _, dir := range []string{"tile", "defs"} {
		files, err := st.List(dir)
		if err != nil {
			return err
		}
		names = append(names, files...)
	}
	if _, err := st.ReadFile(tlog.LivenessFile, tlog.MaxLivenessSize); err == nil {
		names = append(names, tlog.LivenessFile)
	}
	dst := filepath.Join(out, "log")
	var tarball bytes.Buffer
	gz := gzip.NewWriter(&tarball)
	tw := tar.NewWriter(gz)
	w := &writer{out: dst}
	for _, n := range names {
		b, err := st.ReadFile(n, maxLogFile)
		if err != nil {
			return err
		}
		if n == tlog.CheckpointFile && !bytes.Equal(b, v.Checkpoint.Note) {
			return errors.New("the log's checkpoint changed while the site was built; build again")
		}
		w.write(n, b)
		hdr := &tar.Header{Name: "log/" + n, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if w.err != nil {
		return w.err
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		return err
	}
	w = &writer{out: out}
	w.write("log.tar.gz", tarball.Bytes())
	if opts.VerifierKey != "" {
		w.write("log.pub", []byte(opts.VerifierKey+"\n"))
	}
	if w.err != nil {
		return w.err
	}
	d, err := tlog.OpenDir(dst)
	if err != nil {
		return err
	}
	defer d.Close()
	got, err := tlog.Verify(d, tlog.VerifyOptions{Key: opts.Key})
	if err != nil {
		return fmt.Errorf("the published copy of the log does not verify: %w", err)
	}
	if got.Checkpoint.Checkpoint != v.Checkpoint.Checkpoint {
		return errors.New("the published copy of the log is not the verified log")
	}
	return nil
}
