// Command relay is the floor `mcpseal run` is measured against: a bare
// stdio relay that starts a server and copies newline-delimited frames
// between its own stdin/stdout and the server's, one goroutine per
// direction, and does nothing else (no parsing, no checks, no buffering
// beyond one read buffer per direction).
//
//	relay SERVER [ARGS...]
//
// It exits when the client closes stdin and the server has exited, with
// the server's exit status. With MCPSEAL_PATHCLOCK set it times its writes
// as `mcpseal run` does (internal/pathclock), for benchtool -pathclock.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/mcpseal/mcpseal/internal/pathclock"
)

// bufSize is the read buffer per direction. A frame longer than this is
// copied in pieces; nothing is ever held back.
const bufSize = 64 << 10

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: relay SERVER [ARGS...]")
		os.Exit(2)
	}
	// Opened before the server starts, so that a file it cannot create
	// leaves nothing running.
	clock, writeClock, err := pathclock.Open(os.Getenv, "")
	if err != nil {
		fatal(err)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Env = pathclock.Without(os.Environ()) // the server does not inherit the clock
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	var fromClient, fromServer *pathclock.Dir
	if clock != nil {
		fromClient, fromServer = &clock.FromClient, &clock.FromServer
	}
	done := make(chan struct{})
	go func() { // client -> server
		_ = copyFrames(in, os.Stdin, fromClient)
		in.Close()
	}()
	go func() { // server -> client
		_ = copyFrames(os.Stdout, out, fromServer)
		close(done)
	}()
	<-done
	err = cmd.Wait()
	if werr := writeClock(); werr != nil {
		fmt.Fprintln(os.Stderr, "relay:", werr)
	}
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		os.Exit(xe.ExitCode())
	}
	if err != nil {
		fatal(err)
	}
}

// copyFrames copies newline-delimited frames from r to w, one write per
// frame (or per buffer-full of a long frame), until r ends. clock, when
// not nil, times each write (MCPSEAL_PATHCLOCK, as `mcpseal run` does).
func copyFrames(w io.Writer, r io.Reader, clock *pathclock.Dir) error {
	br := bufio.NewReaderSize(r, bufSize)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			var mark pathclock.Mark
			if clock != nil {
				mark = clock.Gated(pathclock.Now()) // nothing between read and write
			}
			if _, werr := w.Write(line); werr != nil {
				return werr
			}
			if clock != nil {
				clock.Written(mark)
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "relay:", err)
	os.Exit(1)
}
