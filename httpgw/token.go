package httpgw

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// NewToken returns a fresh launch token: 32 random bytes in hex, prefixed
// so that a leaked one is recognisable.
func NewToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return "mcpseal_gw_" + hex.EncodeToString(b[:])
}

// WriteToken writes token to path, mode 0600, atomically (a temp file in
// the same folder, fsync, rename), creating the folder 0700 if needed. An
// existing file that is not a regular file is refused.
func WriteToken(path, token string) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return errors.New("the token file exists and is not a regular file")
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create the token folder: %w", err)
	}
	f, err := os.CreateTemp(dir, ".mcpseal-token-*")
	if err != nil {
		return fmt.Errorf("cannot write the token file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("cannot write the token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("cannot write the token file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("cannot write the token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot write the token file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cannot write the token file: %w", err)
	}
	return nil
}

// tokenOK checks the request's bearer token in constant time. Exactly one
// Authorization header, scheme "Bearer" (any case), the exact token.
func tokenOK(h http.Header, token string) bool {
	v := h.Values("Authorization")
	if len(v) != 1 {
		return false
	}
	scheme, got, ok := strings.Cut(v[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}
