package fsutil

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// envChild makes the test binary a helper process: "OP PATH" opens PATH
// as OP says, prints "ready", and keeps it until its stdin closes. Other
// processes, not goroutines: what these tests check (locks, share modes,
// open descriptors) is what the system tells one process of another.
const envChild = "CCM_FSUTIL_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(envChild); spec != "" {
		os.Exit(child(spec))
	}
	os.Exit(m.Run())
}

func child(spec string) int {
	op, path, _ := strings.Cut(spec, " ")
	var err error
	var keep io.Closer
	switch op {
	case "read": // os.Open: on Windows it does not share delete
		keep, err = os.Open(path)
	case "read-shared": // fsutil.OpenFile: shares everything
		keep, err = OpenFile(path, os.O_RDONLY, 0)
	case "write":
		keep, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	case "lock":
		var l *Lock
		l, err = LockFile(context.Background(), path, true, 0)
		if err == nil {
			keep = closerFunc(l.Unlock)
		}
	default:
		err = fmt.Errorf("unknown op %q", op)
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	keep.Close()
	return 0
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// helper is a running helper process.
type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startHelper starts a helper process that does op on path and waits
// until it has.
func startHelper(t *testing.T, op, path string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+op+" "+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, stdin: stdin}
	t.Cleanup(h.stop)
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("helper %s %s: %q", op, path, line)
	}
	return h
}

// stop ends the helper (closing its stdin) and waits for it.
func (h *helper) stop() {
	if h.stdin != nil {
		h.stdin.Close()
		h.stdin = nil
		h.cmd.Wait()
	}
}
