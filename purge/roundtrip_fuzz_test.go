package purge

import (
	"bytes"
	"context"
	"testing"

	"ccm/internal/synth"
)

// FuzzPurgeRestore: with every keep flag on, a purge only moves content
// into the store (and a restore puts it back), so purge then restore gives
// back the original bytes, whatever the shape of the session, the
// threshold, the windows and the microcompaction rules. The seed corpus
// runs with every go test; `go test ./purge -run X -fuzz FuzzPurgeRestore`
// explores further.
func FuzzPurgeRestore(f *testing.F) {
	f.Add(int64(1), uint8(8), uint16(5000), uint8(2), uint8(10), uint8(0))
	f.Add(int64(2), uint8(12), uint16(300), uint8(0), uint8(0), uint8(0xff))
	f.Add(int64(3), uint8(20), uint16(1000), uint8(1), uint8(4), uint8(0x55))
	f.Add(int64(4), uint8(6), uint16(200), uint8(3), uint8(1), uint8(0xaa))
	f.Add(int64(5), uint8(16), uint16(2500), uint8(0), uint8(2), uint8(0x0f))
	f.Fuzz(func(t *testing.T, seed int64, turns uint8, threshold uint16, recentTurns, recentResults, flags uint8) {
		o := synth.Options{Seed: seed, Turns: 2 + int(turns%24), Thinking: flags&1 != 0, Progress: flags&2 != 0,
			Images: flags&4 != 0, Pins: flags&8 != 0, Compactions: int(flags>>4) % 3}
		if flags&16 != 0 {
			o.Version = "2.1.330"
		}
		data, _ := gen(t, o)
		e := newEnv(t)
		p := e.write("s.jsonl", data)
		opt := e.opts()
		opt.KeepThinking, opt.KeepProgress, opt.KeepBookkeeping = true, true, true
		opt.Threshold = 100 + int(threshold)
		opt.OldThreshold = opt.Threshold / 2 * int(flags>>7)
		opt.RecentTurns = int(recentTurns % 5)
		opt.RecentResults = int(recentResults % 20)
		opt.KeepStaleReads, opt.KeepDuplicates, opt.KeepOldTodos = flags&32 != 0, flags&64 != 0, flags&32 == 0
		rep, _ := e.purge(p, opt)
		t.Logf("%d stubs, %d bytes moved to the store", rep.Stubs, rep.StubbedBytes)
		if _, err := restoreFile(context.Background(), p, opt); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, p); !bytes.Equal(got, data) {
			t.Errorf("purge then restore changed the file (%d -> %d bytes)", len(data), len(got))
			reportFirstDiff(t, data, got)
		}
	})
}
