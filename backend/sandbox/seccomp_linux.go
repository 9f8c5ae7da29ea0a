package sandbox

import (
	"encoding/binary"
	"runtime"
	"syscall"
)

// The sandbox's seccomp filter keeps commands from making set-user-ID or
// set-group-ID files. Inside, such a file gains nothing (no_new_privs, and
// the mounts are nosuid), but the workspace and HOME are host folders: run
// as root, the command's user is host root's uid, so a set-user-ID file it
// left there would be a root shell for any local user who can reach it.
// So chmod and its kin, and the calls that create files with a mode, fail
// with EPERM when the mode has S_ISUID or S_ISGID; openat2 (whose mode the
// filter cannot read) and io_uring (whose operations bypass seccomp) fail
// with ENOSYS, so programs fall back to the calls checked. A process of
// another architecture (32-bit x86 on amd64) is refused every call.
// Architectures other than amd64 and arm64 get no filter.

// BPF instructions and seccomp return values (linux/filter.h,
// linux/seccomp.h).
const (
	bpfLdAbs  = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeq    = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJge    = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJset   = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfRet    = 0x06 // BPF_RET | BPF_K
	retAllow  = 0x7fff0000
	retErrno  = 0x00050000
	setIDBits = 0o6000   // S_ISUID | S_ISGID
	creatBits = 0x400040 // O_CREAT | __O_TMPFILE (the same on amd64 and arm64)
)

type bpfInsn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// modeCall is a system call whose argument mode (an index) must not hold
// setIDBits; flags, when not -1, is the index of open flags without which
// the mode means nothing.
type modeCall struct {
	nr          uint32
	mode, flags int
}

type seccompArch struct {
	audit  uint32
	x32    bool // amd64: refuse the x32 ABI's numbers
	checks []modeCall
	deny   []uint32 // refused with ENOSYS
}

var seccompArches = map[string]seccompArch{
	"amd64": {
		audit: 0xc000003e, x32: true,
		checks: []modeCall{
			{90, 1, -1}, {91, 1, -1}, {268, 2, -1}, {452, 2, -1}, // chmod, fchmod, fchmodat, fchmodat2
			{85, 1, -1}, {2, 2, 1}, {257, 3, 2}, // creat, open, openat
			{133, 1, -1}, {259, 2, -1}, // mknod, mknodat
		},
		deny: []uint32{437, 425}, // openat2, io_uring_setup
	},
	"arm64": {
		audit: 0xc00000b7,
		checks: []modeCall{
			{52, 1, -1}, {53, 2, -1}, {452, 2, -1}, // fchmod, fchmodat, fchmodat2
			{56, 3, 2}, {33, 2, -1}, // openat, mknodat
		},
		deny: []uint32{437, 425},
	},
}

// argLow is the offset in struct seccomp_data of the low 32 bits of
// argument i (little-endian).
func argLow(i int) uint32 { return uint32(16 + 8*i) }

// seccompProgram returns the filter for this architecture, or nil.
func seccompProgram() []byte {
	a, ok := seccompArches[runtime.GOARCH]
	if !ok {
		return nil
	}
	eperm := uint32(retErrno | uint32(syscall.EPERM))
	enosys := uint32(retErrno | uint32(syscall.ENOSYS))
	p := []bpfInsn{
		{bpfLdAbs, 0, 0, 4}, // arch
		{bpfJeq, 1, 0, a.audit},
		{bpfRet, 0, 0, eperm},
	}
	if a.x32 {
		p = append(p, bpfInsn{bpfLdAbs, 0, 0, 0}, bpfInsn{bpfJge, 0, 1, 0x40000000}, bpfInsn{bpfRet, 0, 0, eperm})
	}
	for _, nr := range a.deny {
		p = append(p, bpfInsn{bpfLdAbs, 0, 0, 0}, bpfInsn{bpfJeq, 0, 1, nr}, bpfInsn{bpfRet, 0, 0, enosys})
	}
	for _, c := range a.checks {
		if c.flags < 0 {
			p = append(p,
				bpfInsn{bpfLdAbs, 0, 0, 0},
				bpfInsn{bpfJeq, 0, 4, c.nr},
				bpfInsn{bpfLdAbs, 0, 0, argLow(c.mode)},
				bpfInsn{bpfJset, 0, 1, setIDBits},
				bpfInsn{bpfRet, 0, 0, eperm},
				bpfInsn{bpfRet, 0, 0, retAllow})
		} else {
			p = append(p,
				bpfInsn{bpfLdAbs, 0, 0, 0},
				bpfInsn{bpfJeq, 0, 6, c.nr},
				bpfInsn{bpfLdAbs, 0, 0, argLow(c.flags)},
				bpfInsn{bpfJset, 0, 3, creatBits},
				bpfInsn{bpfLdAbs, 0, 0, argLow(c.mode)},
				bpfInsn{bpfJset, 0, 1, setIDBits},
				bpfInsn{bpfRet, 0, 0, eperm},
				bpfInsn{bpfRet, 0, 0, retAllow})
		}
	}
	p = append(p, bpfInsn{bpfRet, 0, 0, retAllow})
	b := make([]byte, 0, 8*len(p))
	for _, in := range p {
		b = binary.LittleEndian.AppendUint16(b, in.code)
		b = append(b, in.jt, in.jf)
		b = binary.LittleEndian.AppendUint32(b, in.k)
	}
	return b
}
