package cli

import (
	"bufio"
	"bytes"
	"debug/elf"
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
// A page is dropped only when two independent accounts say it was never
// written, so that mapping it again from the file changes nothing a
// program could see:
//
//   - the executable's own program headers: the mapping lies wholly in a
//     loadable segment that is not writable (PT_LOAD without PF_W), in
//     none of the segments the loader writes and then makes read-only
//     (PT_GNU_RELRO), and the executable has no text relocations;
//   - the kernel's: the mapping is private, not writable, and holds no
//     written (copy-on-write) page, in memory (Anonymous) or in swap
//     (Swap) — a written page that was swapped out is counted only
//     there, and MADV_DONTNEED would bring the file's bytes back in its
//     place (found by the red team: a RELRO page of an externally linked
//     build, its relocations lost).
//
// Anything unexpected — no /proc, an executable that does not parse, a
// line that does not parse — leaves everything as it was. What remains is
// what ordinary page reclaim does to any clean page of a running program:
// a file changed under it (over NFS, or in an overlayfs lower layer, where
// Linux's ETXTBSY does not reach) is read again from the file.
func dropStartPages() {
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	ro, err := readOnlyRanges("/proc/self/exe")
	if err != nil || len(ro) == 0 {
		return
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return
	}
	defer f.Close()
	for _, m := range exeMappings(io.LimitReader(f, maxSmapsBytes), uint64(st.Dev), st.Ino, ro) {
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED)
	}
}

// maxSmapsBytes bounds what is read of /proc/self/smaps: a Go process has
// a few dozen mappings of about 1 KB each.
const maxSmapsBytes = 1 << 20

type mapping struct{ start, end uintptr }

// fileRange is a span [lo, hi) of the executable's file offsets.
type fileRange struct{ lo, hi uint64 }

// readOnlyRanges returns the spans of the executable at path that are
// mapped but never written: its PT_LOAD segments without PF_W, widened to
// whole pages (the loader maps whole pages), less every PT_GNU_RELRO
// segment's pages. An executable with text relocations, which the loader
// writes into its read-only segments, has none.
func readOnlyRanges(path string) ([]fileRange, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	page := uint64(os.Getpagesize())
	down := func(v uint64) uint64 { return v &^ (page - 1) }
	up := func(v uint64) uint64 { return (v + page - 1) &^ (page - 1) }
	var ro, relro []fileRange
	for _, p := range f.Progs {
		switch {
		case p.Type == elf.PT_LOAD && p.Flags&elf.PF_W == 0 && p.Filesz > 0:
			ro = append(ro, fileRange{down(p.Off), up(p.Off + p.Filesz)})
		case p.Type == elf.PT_GNU_RELRO:
			relro = append(relro, fileRange{down(p.Off), up(p.Off + p.Filesz)})
		case p.Type == elf.PT_DYNAMIC:
			if textRelocations(f) {
				return nil, nil
			}
		}
	}
	var out []fileRange
	for _, r := range ro {
		if !overlapsAny(r, relro) {
			out = append(out, r)
		}
	}
	return out, nil
}

// textRelocations reports whether f's dynamic section asks the loader to
// write into read-only segments (DT_TEXTREL, or DF_TEXTREL in DT_FLAGS);
// a dynamic section that cannot be read, or found (section headers
// stripped), counts as asking.
func textRelocations(f *elf.File) bool {
	if f.SectionByType(elf.SHT_DYNAMIC) == nil {
		return true
	}
	tr, err1 := f.DynValue(elf.DT_TEXTREL)
	flags, err2 := f.DynValue(elf.DT_FLAGS)
	if err1 != nil || err2 != nil || len(tr) > 0 {
		return true
	}
	for _, v := range flags {
		if v&uint64(elf.DF_TEXTREL) != 0 {
			return true
		}
	}
	return false
}

func overlapsAny(r fileRange, rs []fileRange) bool {
	for _, o := range rs {
		if r.lo < o.hi && o.lo < r.hi {
			return true
		}
	}
	return false
}

// exeMappings reads smaps and returns the mappings of the file dev, ino
// that are private and not writable, lie wholly within one of the file
// spans ro, and have no written page (Anonymous and Swap both 0 kB, each
// given once). A mapping any of whose lines does not parse is not
// returned.
func exeMappings(r io.Reader, dev, ino uint64, ro []fileRange) []mapping {
	var (
		out  []mapping
		cur  mapping
		ours bool // cur is a read-only mapping of the file, within ro
		anon = -1 // cur's Anonymous kB; -1 not seen
		swap = -1 // cur's Swap kB; -1 not seen
	)
	done := func() {
		if ours && anon == 0 && swap == 0 {
			out = append(out, cur)
		}
		ours, anon, swap = false, -1, -1
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Bytes()
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && len(k) > 0 && !bytes.ContainsAny(k, " -") {
			var n *int
			switch string(k) {
			case "Anonymous":
				n = &anon
			case "Swap":
				n = &swap
			default:
				continue
			}
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(v)), "kB")))
			if err != nil || *n != -1 {
				ours = false // unreadable or repeated: not ours to drop
			}
			*n = kb
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
		off, err6 := strconv.ParseUint(fs[2], 16, 64)
		major, minor, ok2 := strings.Cut(fs[3], ":")
		maj, err3 := strconv.ParseUint(major, 16, 32)
		mnr, err4 := strconv.ParseUint(minor, 16, 32)
		inode, err5 := strconv.ParseUint(fs[4], 10, 64)
		if !ok || !ok2 || err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || err6 != nil ||
			end <= start || off+(end-start) < off {
			continue
		}
		cur = mapping{uintptr(start), uintptr(end)}
		ours = len(fs[1]) == 4 && fs[1][1] != 'w' && fs[1][3] == 'p' &&
			inode == ino && unix.Mkdev(uint32(maj), uint32(mnr)) == dev &&
			within(fileRange{off, off + (end - start)}, ro)
	}
	done()
	if sc.Err() != nil {
		return nil
	}
	return out
}

// within reports whether r lies wholly inside one of rs.
func within(r fileRange, rs []fileRange) bool {
	for _, o := range rs {
		if o.lo <= r.lo && r.hi <= o.hi {
			return true
		}
	}
	return false
}
