package inotify

import (
	"bytes"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BufSize is a buffer that Drain reads many notices into at once.
const BufSize = 64 << 10

// Drain reads every notice queued on the inotify instance fd, without
// blocking (fd is IN_NONBLOCK), into buf, and gives each to note: its
// watch, mask and name (empty for the watched folder itself; valid only
// during the call). It returns an error when the queue could not be read,
// and so what changed cannot be told.
func Drain(fd int, buf []byte, note func(wd int32, mask uint32, name []byte)) error {
	const maxEvent = unix.SizeofInotifyEvent + unix.NAME_MAX + 1
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return nil
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return unix.EIO
		}
		for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
			size := unix.SizeofInotifyEvent + int(ev.Len)
			if size > len(b) {
				break
			}
			name := b[unix.SizeofInotifyEvent:size]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[size:]
			note(ev.Wd, ev.Mask, name)
		}
		if n <= len(buf)-maxEvent {
			return nil // emptied: a fuller queue would have filled the buffer
		}
	}
}

// Local reports whether the file system of the open file fd is one whose
// every change goes through this kernel, and so reaches inotify: a local
// one. Changes made elsewhere (NFS, SMB, FUSE servers, 9p) produce no
// notices.
func Local(fd int) bool {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return false
	}
	return LocalType(int64(fs.Type))
}

// LocalType reports whether a file system type (statfs f_type) is a local
// one, as Local.
func LocalType(t int64) bool {
	switch uint32(t) {
	case unix.EXT4_SUPER_MAGIC, // also ext2 and ext3
		unix.XFS_SUPER_MAGIC,
		unix.BTRFS_SUPER_MAGIC,
		unix.TMPFS_MAGIC,
		unix.RAMFS_MAGIC,
		unix.F2FS_SUPER_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC,
		0x2fc12fc1, // ZFS
		0xca451a4e: // bcachefs
		return true
	}
	return false
}
