package launch

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// The helper is mcpseal itself, started again with HelperCommand as its
// first argument (the CLI's hidden "sandbox-init" command calls
// HelperMain). It runs in two stages, each a process of its own:
//
//	init  PID 1 of the sandbox's namespaces: mounts /proc, brings up lo,
//	      opens the egress listener, starts the exec stage, forwards
//	      SIGTERM, reaps, and kills what the server leaves behind.
//	exec  confines itself (rlimits, no_new_privs, capabilities, Landlock,
//	      seccomp) and executes the verified descriptor.
//
// Both read their configuration from a pipe and report to mcpseal on a
// SOCK_SEQPACKET socket; descriptors travel as SCM_RIGHTS.

// HelperCommand is the argument that selects the helper.
const HelperCommand = "sandbox-init"

// The helper's descriptors, the same in both stages.
const (
	fdCtrl   = 3 // SOCK_SEQPACKET to mcpseal
	fdConfig = 4 // the configuration, JSON, until EOF
	fdExe    = 5 // the verified executable
	fdCwd    = 6 // the verified working folder
	fdStatus = 7 // exec stage: closed by a successful exec, else an error
)

// maxHelperConfig bounds the configuration the helper reads: a profile
// (at most MaxProfileSize) and the resolved environment.
const maxHelperConfig = 4 << 20

// maxHelperMsg bounds one control message.
const maxHelperMsg = 64 << 10

// helperConfig is what mcpseal tells the helper.
type helperConfig struct {
	Probe       bool          `json:"probe"` // confine, report, exit without executing
	Namespaced  bool          `json:"namespaced"`
	Network     NetworkMode   `json:"network"`
	ProxyPort   int           `json:"proxy_port"` // egress: set by init for the exec stage
	Argv        []string      `json:"argv"`
	Env         []string      `json:"env"`
	ReadOnly    []string      `json:"read_only"`
	ReadWrite   []string      `json:"read_write"`
	Limits      Limits        `json:"limits"`
	Require     []Confinement `json:"require"`
	Nproc       bool          `json:"nproc"`        // RLIMIT_NPROC binds here
	TaskReserve int64         `json:"task_reserve"` // tasks of the helper besides the server's
	CgroupProcs string        `json:"cgroup_procs"` // the pids cgroup the exec stage joins
	Notify      bool          `json:"notify"`       // seccomp denials go to a listener
	HelperArgv  []string      `json:"helper_argv"`
}

// helperMsg is what the helper tells mcpseal.
type helperMsg struct {
	Kind        string        `json:"kind"` // "net", "confined", "started", "exit", "error"
	Port        int           `json:"port,omitempty"`
	Enforced    []Enforcement `json:"enforced,omitempty"`
	NotEnforced []Enforcement `json:"not_enforced,omitempty"`
	PID         int           `json:"pid,omitempty"`
	Status      int           `json:"status,omitempty"`
	Signal      string        `json:"signal,omitempty"`
	CPUMillis   int64         `json:"cpu_ms,omitempty"`
	Orphans     int           `json:"orphans,omitempty"`
	Message     string        `json:"message,omitempty"`
}

// HelperMain runs the helper stage args names ("init" when args is empty,
// or "exec") and returns the process's exit status. It never returns from
// a successful exec.
func HelperMain(args []string) int {
	stage := "init"
	if len(args) > 0 {
		stage = args[0]
	}
	ctrl := os.NewFile(fdCtrl, "ctrl")
	cfg, err := readHelperConfig(os.NewFile(fdConfig, "config"))
	if err != nil {
		sendMsg(ctrl, helperMsg{Kind: "error", Message: "sandbox helper: " + err.Error()}, -1)
		return 125
	}
	switch stage {
	case "init":
		return initStage(ctrl, cfg)
	case "exec":
		return execStage(ctrl, cfg)
	}
	sendMsg(ctrl, helperMsg{Kind: "error", Message: "sandbox helper: unknown stage"}, -1)
	return 125
}

func readHelperConfig(f *os.File) (*helperConfig, error) {
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxHelperConfig+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxHelperConfig {
		return nil, fmt.Errorf("configuration larger than %d bytes", maxHelperConfig)
	}
	cfg := new(helperConfig)
	if err := json.Unmarshal(data, cfg); err != nil {
		return nil, fmt.Errorf("configuration: %v", err)
	}
	return cfg, nil
}

// sendMsg sends m, with the descriptor fd when fd >= 0, on the control
// socket. Errors are ignored: mcpseal gone means the sandbox is ending.
func sendMsg(ctrl *os.File, m helperMsg, fd int) {
	data, err := json.Marshal(m)
	if err != nil || len(data) > maxHelperMsg {
		data = []byte(`{"kind":"error","message":"sandbox helper: message too large"}`)
		fd = -1
	}
	var oob []byte
	if fd >= 0 {
		oob = unix.UnixRights(fd)
	}
	_ = unix.Sendmsg(int(ctrl.Fd()), data, oob, nil, 0)
}

// writeConfig writes cfg to w and closes w.
func writeConfig(w io.WriteCloser, cfg *helperConfig) error {
	data, err := json.Marshal(cfg)
	if err != nil {
		w.Close()
		return err
	}
	_, err = w.Write(data)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
