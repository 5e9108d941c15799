package sessions

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"ccm/internal/fsutil"
	"ccm/internal/testutil"
	"ccm/transcript"
)

// The one live rule, for a batch: written within transcript.LiveWindow,
// or held open for writing by another process, also in a symlinked
// project folder; under CCM_LIVE_DETECT=portable only the modification
// time counts.
func TestLivenessAndThePortableSwitch(t *testing.T) {
	if _, ok := fsutil.OpenForWriting(t.TempDir()); !ok {
		t.Skip("this system cannot tell which files are held open: the modification time alone counts")
	}
	c := newCfg(t)
	held := filepath.Join(c.projects, "-linked", c.linked+".jsonl") // through the link
	idle := filepath.Join(c.projects, "-plain", c.plain+".jsonl")
	recent := filepath.Join(c.projects, "-plain", "cccccccc-3333-4333-8333-333333333333.jsonl")
	write(t, recent, 10)
	now := time.Now()
	os.Chtimes(recent, now.Add(-time.Minute), now.Add(-time.Minute))
	testutil.HoldOpenForWriting(t, held)
	stat := func(p string) File {
		f, err := StatFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, w := range []struct {
		portable           bool
		held, idle, recent string
	}{
		{false, transcript.LiveWriterReason, "", transcript.LiveRecentReason},
		{true, "", "", transcript.LiveRecentReason},
	} {
		if w.portable {
			t.Setenv(fsutil.LiveDetectEnv, "portable")
		}
		l := NewLiveness(c.cfg, now)
		if got := l.Live(stat(held)); got != w.held {
			t.Errorf("portable %v: held file: %q, want %q", w.portable, got, w.held)
		}
		if got := l.Live(stat(idle)); got != w.idle {
			t.Errorf("portable %v: idle file: %q", w.portable, got)
		}
		if got := l.Live(stat(recent)); got != w.recent {
			t.Errorf("portable %v: recent file: %q, want %q", w.portable, got, w.recent)
		}
		// transcript.HasWriter, for a file the user names, follows the
		// same switch: it knows of the writer, or says it cannot tell.
		fi, _ := os.Stat(held)
		if writer, known := transcript.HasWriter(held, fi); !writer || known == w.portable {
			t.Errorf("portable %v: HasWriter = %v, %v", w.portable, writer, known)
		}
	}
}
