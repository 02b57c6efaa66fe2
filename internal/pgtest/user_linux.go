package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

var interrupt = syscall.SIGINT

// A credential is the unprivileged user the server runs as; nil when the
// tests already run as one.
type credential = syscall.Credential

// unprivileged returns the user to run the server as: initdb and postgres
// refuse to run as root, and CI runs as root, so root's tests run them as
// nobody.
func unprivileged() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("running as root, and there is no user nobody to run PostgreSQL as: %v", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user nobody has no numeric ids")
	}
	return &credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

// ownedTempDir makes the cluster's folder, owned by the server's user. As
// root it is made under /tmp, which every user can reach ($TMPDIR may be
// root's own).
func ownedTempDir() (string, *credential, error) {
	cred, err := unprivileged()
	if err != nil {
		return "", nil, err
	}
	parent := ""
	if cred != nil {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "mcpseal-pg-")
	if err != nil {
		return "", nil, err
	}
	if err := chown(dir, cred); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, cred, nil
}

func chown(path string, cred *credential) error {
	if cred == nil {
		return nil
	}
	return os.Chown(path, int(cred.Uid), int(cred.Gid))
}

// asUser runs cmd as cred, and kills it when the test binary dies.
func asUser(cmd *exec.Cmd, cred *credential) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
}
