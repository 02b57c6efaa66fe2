package releasebuild

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// file is one member of an archive.
type file struct {
	name string
	mode fs.FileMode // 0o755 or 0o644, or a folder's
	uid  int         // owner and group; 0 but in the image's home folder
	data []byte
}

// Archives are reproducible: members sorted by name, every time the
// release's fixed time (the commit's), owner and group 0 with no names,
// no gzip file name or time, and the compressor's fixed settings. The same
// inputs give the same bytes on any machine.

func sortFiles(files []file) []file {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.name, b.name) })
	return files
}

// tarOf returns the uncompressed tar of files.
func tarOf(files []file, mtime time.Time) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range sortFiles(files) {
		mode := int64(f.mode.Perm())
		if f.mode&fs.ModeSticky != 0 {
			mode |= 0o1000
		}
		h := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.name,
			Mode:     mode,
			Size:     int64(len(f.data)),
			ModTime:  mtime.UTC(),
			Uid:      f.uid,
			Gid:      f.uid,
			Format:   tar.FormatPAX,
		}
		if f.mode.IsDir() {
			h.Typeflag, h.Size, h.Name = tar.TypeDir, 0, strings.TrimSuffix(f.name, "/")+"/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// gzipped compresses data with no name, no time and the default compression level.
func gzipped(data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// tarGz is the .tar.gz of files.
func tarGz(files []file, mtime time.Time) ([]byte, error) {
	t, err := tarOf(files, mtime)
	if err != nil {
		return nil, err
	}
	return gzipped(t)
}

// zipArchive is the .zip of files (for Windows).
func zipArchive(files []file, mtime time.Time) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.DefaultCompression) })
	for _, f := range sortFiles(files) {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime.UTC()}
		h.SetMode(f.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
