package releasebuild

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The container image is built without a container engine: one layer on
// an empty (scratch) base holding the static binary at /mcpseal (owned by
// root, so the process cannot rewrite it), /etc/passwd and /etc/group
// naming the non-root user 65532 ("nonroot", as distroless does), that
// user's home (0700, where $MCPSEAL_HOME defaults to ~/.mcpseal) and /tmp.
// The image runs as 65532:65532 with /mcpseal as its entrypoint. There is
// no shell and no CA bundle in it (mount one and set SSL_CERT_FILE for
// HTTPS upstreams).
//
// Every linux binary of the release becomes one platform of an OCI image
// index, written as an OCI image layout and packed into one reproducible
// tar. The index's own bytes are a release artifact too, so SHA256SUMS
// records the image's digest: the digest of mcpseal_V_image.index.json is
// the index digest to pull by (registry@sha256:…).

const (
	imageUID  = 65532
	imageHome = "home/nonroot"
)

// imageLayer is the gzipped tar of the image's one layer.
func imageLayer(binary []byte, mtime time.Time) ([]byte, error) {
	files := []file{
		{name: "etc", mode: os.ModeDir | 0o755},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "home", mode: os.ModeDir | 0o755},
		{name: imageHome, mode: os.ModeDir | 0o700, uid: imageUID},
		{name: "mcpseal", mode: 0o755, data: binary},
		{name: "tmp", mode: os.ModeDir | os.ModeSticky | 0o777},
	}
	return tarGz(files, mtime)
}

// platformImage is the image of one linux binary.
func platformImage(arch string, binary []byte, mtime time.Time) (v1.Image, error) {
	gz, err := imageLayer(binary, mtime)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gz)), nil }, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: mtime.UTC()}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Created:      created,
		Config: v1.Config{
			User:       fmt.Sprintf("%d:%d", imageUID, imageUID),
			Entrypoint: []string{"/mcpseal"},
			Cmd:        []string{"--help"},
			Env:        []string{"HOME=/" + imageHome},
			WorkingDir: "/" + imageHome,
		},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{Created: created, CreatedBy: "mcpseal scripts/release"}})
}

// image returns the OCI layout tar and the raw image index of the linux
// binaries (arch -> bytes).
func image(release string, binaries map[string][]byte, mtime time.Time) (layoutTar, index []byte, err error) {
	var adds []mutate.IndexAddendum
	for _, arch := range slices.Sorted(maps.Keys(binaries)) {
		img, err := platformImage(arch, binaries[arch], mtime)
		if err != nil {
			return nil, nil, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	ii := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	index, err = ii.RawManifest()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "mcpseal-image-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return nil, nil, err
	}
	if err := p.AppendIndex(ii, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": release})); err != nil {
		return nil, nil, err
	}
	files, err := readTree(dir)
	if err != nil {
		return nil, nil, err
	}
	layoutTar, err = tarOf(files, mtime)
	return layoutTar, index, err
}

// readTree reads every file and folder under dir, for an archive.
func readTree(dir string) ([]file, error) {
	var files []file
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			files = append(files, file{name: rel, mode: os.ModeDir | 0o755})
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", rel)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, file{name: rel, mode: 0o644, data: b})
		return nil
	})
	return files, err
}
