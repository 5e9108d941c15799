package purge

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"ccm/internal/synth"
)

// claude-context-manager read the whole file again after the write, to find
// /context output. Once the new file is in place, purge reads neither it nor
// the old one (no appends happened), token estimate included.
func TestNoRereadAfterWrite(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 119, Turns: 10, Thinking: true, Progress: true})
	e := newEnv(t)
	p := e.write("s.jsonl", in)
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if _, err := syscall.InotifyAddWatch(fd, e.dir, syscall.IN_OPEN|syscall.IN_ACCESS|syscall.IN_MOVED_TO); err != nil {
		t.Fatal(err)
	}
	o := e.opts()
	o.Tokens = true
	if _, err := File(context.Background(), p, o); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	n, err := syscall.Read(fd, buf)
	if err != nil {
		t.Fatal(err)
	}
	renamed := false
	reads := 0
	for off := 0; off+syscall.SizeofInotifyEvent <= n; {
		ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
		name := strings.TrimRight(string(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+int(ev.Len)]), "\x00")
		off += syscall.SizeofInotifyEvent + int(ev.Len)
		if name != "s.jsonl" {
			continue
		}
		switch {
		case ev.Mask&syscall.IN_MOVED_TO != 0:
			renamed = true
		case renamed:
			reads++
		}
	}
	if !renamed {
		t.Fatal("no rename seen")
	}
	if reads > 0 {
		t.Errorf("%d opens or reads of the transcript after the rename", reads)
	}
}
