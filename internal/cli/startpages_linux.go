package cli

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// dropStartPages takes out of this process's resident set the pages of
// its own executable that start-up touched and a session may never touch
// again: package initialisation, flag parsing, the commands not run. They
// are the larger part of a quiet `mcpseal run`'s RSS (about 14 of 20 MiB
// were the binary's pages), though they are clean copies of the file,
// kept in the page cache and shared by every mcpseal process: the kernel
// maps them back from there, without reading the disk, when they are
// touched again. Private memory is unchanged (docs/performance.md).
//
// Only mappings of the executable that are not writable and hold no
// anonymous pages are dropped: such pages were never written, so they
// are the file's bytes, and mapping them again changes nothing a program
// could see. (The running executable cannot be written either: Linux
// refuses it with ETXTBSY.) Anything unexpected — no /proc, a line that
// does not parse — leaves everything as it was.
func dropStartPages() {
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return
	}
	defer f.Close()
	for _, m := range exeMappings(io.LimitReader(f, maxSmapsBytes), uint64(st.Dev), st.Ino) {
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED)
	}
}

// maxSmapsBytes bounds what is read of /proc/self/smaps: a Go process has
// a few dozen mappings of about 1 KB each.
const maxSmapsBytes = 1 << 20

type mapping struct{ start, end uintptr }

// exeMappings reads smaps and returns the mappings of the file dev, ino
// that are not writable and have no anonymous pages. A mapping whose
// header or Anonymous line does not parse is not returned.
func exeMappings(r io.Reader, dev, ino uint64) []mapping {
	var (
		out  []mapping
		cur  mapping
		ours bool // cur is a read-only mapping of the file
		anon = -1 // cur's Anonymous kB; -1 not seen
	)
	done := func() {
		if ours && anon == 0 {
			out = append(out, cur)
		}
		ours, anon = false, -1
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Bytes()
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && len(k) > 0 && !bytes.ContainsAny(k, " -") {
			if string(k) == "Anonymous" {
				n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(v)), "kB")))
				if err != nil || anon != -1 {
					ours = false // unreadable or repeated: not ours to drop
				}
				anon = n
			}
			continue
		}
		done()
		// start-end perms offset major:minor inode path
		fs := strings.Fields(string(line))
		if len(fs) < 6 {
			continue
		}
		lo, hi, ok := strings.Cut(fs[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		major, minor, ok2 := strings.Cut(fs[3], ":")
		maj, err3 := strconv.ParseUint(major, 16, 32)
		mnr, err4 := strconv.ParseUint(minor, 16, 32)
		inode, err5 := strconv.ParseUint(fs[4], 10, 64)
		if !ok || !ok2 || err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || end <= start {
			continue
		}
		cur = mapping{uintptr(start), uintptr(end)}
		ours = len(fs[1]) == 4 && fs[1][1] != 'w' && fs[1][3] == 'p' &&
			inode == ino && unix.Mkdev(uint32(maj), uint32(mnr)) == dev
	}
	done()
	if sc.Err() != nil {
		return nil
	}
	return out
}
