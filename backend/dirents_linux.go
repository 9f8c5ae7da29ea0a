package backend

import (
	"bytes"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// direntBufSize is the buffer one getdents64 call fills: 32 KiB holds about
// a thousand entries, so a folder of a few thousand files is read in a few
// calls rather than the standard library's 8 KiB at a time.
const direntBufSize = 32 << 10

// direntBufs recycles getdents buffers: a walk reads many directories.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, direntBufSize); return &b }}

// entryKind is what a directory entry is, as listings count it.
type entryKind int8

const (
	kindNone entryKind = iota - 1 // absent, or neither a file nor a directory
	kindFile
	kindDir
)

// lookupKind looks name up in the directory open at fd, without following
// a symbolic link (which is kindNone). An entry that is gone is kindNone
// without an error; err is another failure.
func lookupKind(fd int, name string) (entryKind, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return kindNone, nil
		}
		return kindNone, err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return kindDir, nil
	case unix.S_IFREG:
		return kindFile, nil
	}
	return kindNone, nil
}

// readNames lists the directory open at fd (which stays open and must be
// at offset 0) with getdents64 directly: no os.File, no DirEntry per entry.
// Each entry's kind is its d_type; DT_UNKNOWN (file systems that do not
// report types) is resolved with an fstatat.
func readNames(fd int, _ string) ([]dirent, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []dirent
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		// struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen;
		// u8 d_type; char d_name[]; }
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ, name := b[18], b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			switch typ {
			case unix.DT_DIR, unix.DT_REG:
				out = append(out, dirent{name: string(name), isDir: typ == unix.DT_DIR})
			case unix.DT_UNKNOWN: // the file system does not say: ask
				if k, err := lookupKind(fd, string(name)); err == nil && k != kindNone {
					out = append(out, dirent{name: string(name), isDir: k == kindDir})
				}
			}
		}
	}
}
