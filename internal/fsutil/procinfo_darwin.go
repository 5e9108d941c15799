package fsutil

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// macOS has no /proc: what a process has open and where it runs come from
// proc_info(2), the system call behind libproc's proc_pidinfo and
// proc_pidfdinfo (what lsof and ps use), made directly since ccm builds
// without cgo. Its structures are fixed in <sys/proc_info.h>; this file
// reads only the fields it needs, at their offsets there. Before any of it
// is trusted, probe checks it against this process's own files and
// working directory: a layout that differs on some macOS, or a system
// call that is refused, makes the callers say they cannot tell (ok
// false) instead of answering wrongly.

const (
	procInfoCallPidInfo   = 2 // PROC_INFO_CALL_PIDINFO
	procInfoCallPidFdInfo = 3 // PROC_INFO_CALL_PIDFDINFO

	procPidListFDs       = 1 // PROC_PIDLISTFDS: struct proc_fdinfo[]
	procPidVnodePathInfo = 9 // PROC_PIDVNODEPATHINFO: struct proc_vnodepathinfo
	procPidFDVnodeInfo   = 1 // PROC_PIDFDVNODEINFO: struct vnode_fdinfo
	proxFDTypeVnode      = 1 // PROX_FDTYPE_VNODE

	sizeofProcFDInfo        = 8    // int32 proc_fd, uint32 proc_fdtype
	sizeofVnodeFDInfo       = 176  // proc_fileinfo (24) + vnode_info (152)
	sizeofVnodeInfo         = 152  // vinfo_stat (136), vi_type, vi_pad, vi_fsid
	sizeofProcVnodePathInfo = 2352 // two vnode_info_path: vnode_info + char[MAXPATHLEN]

	// Offsets in struct vnode_fdinfo: pfi.fi_openflags, then in
	// pvi.vi_stat: vst_dev, vst_mode, vst_ino.
	offOpenFlags = 0
	offDev       = 24
	offMode      = 28
	offIno       = 32

	fWrite = 0x2 // FWRITE in fi_openflags
)

// procInfo is the raw proc_info(2) system call; it returns the bytes it
// filled.
func procInfo(call, pid, flavor int, arg uint64, buf []byte) (int, error) {
	var p unsafe.Pointer
	if len(buf) > 0 {
		p = unsafe.Pointer(&buf[0])
	}
	n, _, errno := syscall.Syscall6(unix.SYS_PROC_INFO, uintptr(call), uintptr(pid), uintptr(flavor), uintptr(arg), uintptr(p), uintptr(len(buf)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// openVnode is a file a process has open.
type openVnode struct {
	id       FileID
	regular  bool
	writable bool
}

// vnodes calls fn for each file pid has open. It returns false when the
// process cannot be inspected (gone, or another user's).
func vnodes(pid int, buf *[]byte, fn func(openVnode)) bool {
	if len(*buf) < 64*sizeofProcFDInfo {
		*buf = make([]byte, 64*sizeofProcFDInfo)
	}
	var n int
	for {
		var err error
		n, err = procInfo(procInfoCallPidInfo, pid, procPidListFDs, 0, *buf)
		if err != nil {
			return false
		}
		if n < len(*buf) || len(*buf) >= 1<<20 {
			break
		}
		*buf = make([]byte, 2*len(*buf)) // full: there may be more
	}
	var info [sizeofVnodeFDInfo]byte
	for i := 0; i+sizeofProcFDInfo <= n; i += sizeofProcFDInfo {
		fd := int32(binary.LittleEndian.Uint32((*buf)[i:]))
		if binary.LittleEndian.Uint32((*buf)[i+4:]) != proxFDTypeVnode {
			continue
		}
		m, err := procInfo(procInfoCallPidFdInfo, pid, procPidFDVnodeInfo, uint64(fd), info[:])
		if err != nil || m != sizeofVnodeFDInfo {
			continue // closed since the listing
		}
		mode := binary.LittleEndian.Uint16(info[offMode:])
		fn(openVnode{
			id:       FileID{Dev: uint64(int32(binary.LittleEndian.Uint32(info[offDev:]))), Ino: binary.LittleEndian.Uint64(info[offIno:])}, // as IDOf converts stat's int32 dev
			regular:  mode&unix.S_IFMT == unix.S_IFREG,
			writable: binary.LittleEndian.Uint32(info[offOpenFlags:])&fWrite != 0,
		})
	}
	return true
}

// processCwd returns the working directory of pid ("" when it cannot be
// read).
func processCwd(pid int) string {
	var buf [sizeofProcVnodePathInfo]byte
	n, err := procInfo(procInfoCallPidInfo, pid, procPidVnodePathInfo, 0, buf[:])
	if err != nil || n != sizeofProcVnodePathInfo {
		return ""
	}
	path := buf[sizeofVnodeInfo : sizeofProcVnodePathInfo/2]
	if i := bytes.IndexByte(path, 0); i >= 0 {
		path = path[:i]
	}
	return string(path)
}

// processArgs returns the command line of pid (nil when it cannot be
// read), from sysctl kern.procargs2: argc, the executable's path, NUL
// padding, then the arguments, each NUL-terminated.
func processArgs(pid int) []string {
	raw, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil || len(raw) < 4 {
		return nil
	}
	argc := int(binary.LittleEndian.Uint32(raw))
	rest := raw[4:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return nil
	}
	rest = bytes.TrimLeft(rest[i:], "\x00")
	args := make([]string, 0, min(argc, 64))
	for len(args) < argc && len(rest) > 0 {
		j := bytes.IndexByte(rest, 0)
		if j < 0 {
			j = len(rest)
		}
		args = append(args, string(rest[:j]))
		rest = rest[min(j+1, len(rest)):]
	}
	return args
}

// processes returns the ids of the processes this user may inspect: all
// of them for root, else those running as this user.
func processes() ([]int, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	euid := os.Geteuid()
	pids := make([]int, 0, len(kps))
	for i := range kps {
		if euid != 0 && int(kps[i].Eproc.Ucred.Uid) != euid {
			continue
		}
		if pid := int(kps[i].Proc.P_pid); pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

var (
	probeOnce     sync.Once
	probeFiles    bool // vnodes tells files and their open mode right
	probeCommands bool // processCwd and processArgs read right
)

// probe checks the readers above against what this process knows of
// itself: a file it opens for writing and another for reading only, its
// working directory and its arguments.
func probe() {
	probeOnce.Do(func() {
		probeFiles = probeVnodes()
		wd, err := os.Getwd()
		if err == nil {
			wd, err = filepath.EvalSymlinks(wd)
		}
		args := processArgs(os.Getpid())
		probeCommands = err == nil && processCwd(os.Getpid()) == wd && len(args) == len(os.Args)
		for i := range args {
			probeCommands = probeCommands && args[i] == os.Args[i]
		}
	})
}

func probeVnodes() bool {
	dir, err := os.MkdirTemp("", "ccm-probe-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	w, err := os.Create(filepath.Join(dir, "w"))
	if err != nil {
		return false
	}
	defer w.Close()
	r, err := os.Create(filepath.Join(dir, "r"))
	if err != nil {
		return false
	}
	r.Close()
	if r, err = os.Open(r.Name()); err != nil {
		return false
	}
	defer r.Close()
	wfi, err1 := w.Stat()
	rfi, err2 := r.Stat()
	if err1 != nil || err2 != nil {
		return false
	}
	wid, rid := IDOf(wfi), IDOf(rfi)
	var sawW, sawR, wrong bool
	var buf []byte
	ok := vnodes(os.Getpid(), &buf, func(v openVnode) {
		switch v.id {
		case wid:
			sawW = true
			wrong = wrong || !v.regular || !v.writable
		case rid:
			sawR = true
			wrong = wrong || !v.regular || v.writable
		}
	})
	return ok && sawW && sawR && !wrong
}
