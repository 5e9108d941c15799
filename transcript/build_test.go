package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"strings"
	"testing"
	"time"
)

// record returns a user record line of about n bytes.
func record(i, n int) string {
	pad := strings.Repeat("x", max(0, n-120))
	return fmt.Sprintf(`{"type":"user","uuid":"u%d","parentUuid":null,"message":{"role":"user","content":"%s"}}`, i, pad) + "\n"
}

// mixedFile has every size class the builder treats apart (lines that
// share a batch, lines over a batch, lines over bigLine) and every kind
// of bad line, in a shuffled order, ending in a torn line.
func mixedFile(seed int64) []byte {
	rng := rand.New(rand.NewSource(seed))
	var parts []string
	for i := 0; i < 400; i++ {
		switch rng.Intn(20) {
		case 0:
			parts = append(parts, record(i, batchBytes+rng.Intn(bigLine-batchBytes)))
		case 1:
			parts = append(parts, record(i, bigLine+1+rng.Intn(1<<20)))
		case 2:
			parts = append(parts, "not json at all\n", "\n", "\x00\x00\x00\n", `["an","array"]`+"\n")
		default:
			parts = append(parts, record(i, 200+rng.Intn(8000)))
		}
	}
	parts = append(parts, `{"type":"user","uuid":"torn"`)
	return []byte(strings.Join(parts, ""))
}

// seen is what a Visitor was shown of one line.
type seen struct {
	num    int
	offset int64
	raw    string
	kind   Kind
	rec    bool
}

// TestBuildVisitsInOrder: whatever the sizes of the lines and however the
// stream is cut into reads, the Visitor sees every line once, in order,
// with its bytes, number, offset and kind as the Reader reports them, and
// the index holds every record in order.
func TestBuildVisitsInOrder(t *testing.T) {
	for _, seed := range []int64{1, 2} {
		data := mixedFile(seed)
		var want []seen
		rd := NewReader(bytes.NewReader(data))
		for {
			l, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, seen{l.Num, l.Offset, string(l.Raw), l.Kind, l.Kind == Object})
		}
		var got []seen
		visit := func(l Line, rec Record, f *Facts, sz *Sizes) error {
			got = append(got, seen{l.Num, l.Offset, string(l.Raw), l.Kind, f != nil})
			if f != nil && (f.Offset != l.Offset || int(f.Size) != len(l.Raw) || rec.UUID() != f.UUID() || sz == nil) {
				t.Errorf("line %d: facts %+v do not match the line", l.Num, *f)
			}
			return nil
		}
		r := &chunkReader{data: data, rng: rand.New(rand.NewSource(seed)), max: 3 << 20}
		ix, err := Build(r, BuildOptions{Sizes: true, Visit: visit})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d: visited %d lines, want %d", seed, len(got), len(want))
		}
		recs := 0
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: line %d visited as (%d, %d, %d bytes, %v), want (%d, %d, %d bytes, %v)", seed, i+1,
					got[i].num, got[i].offset, len(got[i].raw), got[i].kind, want[i].num, want[i].offset, len(want[i].raw), want[i].kind)
			}
			if want[i].rec {
				if ix.Rec(recs).Offset != want[i].offset {
					t.Fatalf("seed %d: record %d at offset %d, want %d", seed, recs, ix.Rec(recs).Offset, want[i].offset)
				}
				recs++
			}
		}
		if recs != ix.Len() || ix.Lines != len(want) || ix.Bytes != int64(len(data)) || ix.Terminated {
			t.Errorf("seed %d: index has %d records, %d lines, %d bytes, terminated %v", seed, ix.Len(), ix.Lines, ix.Bytes, ix.Terminated)
		}
	}
}

// A Visitor's error ends the build early and is returned.
func TestBuildStopsOnVisitorError(t *testing.T) {
	data := mixedFile(3)
	stop := errors.New("stop here")
	calls := 0
	_, err := Build(bytes.NewReader(data), BuildOptions{Visit: func(l Line, _ Record, _ *Facts, _ *Sizes) error {
		calls++
		if l.Num == 50 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) || calls != 50 {
		t.Fatalf("err %v after %d calls, want %v after 50", err, calls, stop)
	}
}

// failingReader returns its data, then an error.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

// A read error is returned, never a partial index.
func TestBuildReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	data := mixedFile(4)
	ix, err := Build(&failingReader{r: bytes.NewReader(data[:len(data)/2]), err: boom}, BuildOptions{})
	if !errors.Is(err, boom) || ix != nil {
		t.Fatalf("got %v, %v; want the read error and no index", ix, err)
	}
}

// The lines read ahead are bounded: building the index of 70 MB of 2 KB
// and 300 KB lines for a slow Visitor keeps the live heap near maxPending
// plus the index, not the file. (A line over bigLine is bounded anyway:
// the reader waits until it is done.)
func TestBuildMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 70 MB")
	}
	mid := []byte(record(1, 300<<10))
	var smalls []byte
	for i := 0; i < 200; i++ {
		smalls = append(smalls, record(i+2, 2000)...)
	}
	var rs []io.Reader
	for i := 0; i < 100; i++ {
		rs = append(rs, bytes.NewReader(mid), bytes.NewReader(smalls))
	}
	var peak uint64
	var ms runtime.MemStats
	n := 0
	_, err := Build(io.MultiReader(rs...), BuildOptions{Visit: func(Line, Record, *Facts, *Sizes) error {
		// A slow consumer at first: a reader not held back would read
		// the whole input meanwhile.
		if n++; n < 500 {
			time.Sleep(200 * time.Microsecond)
		}
		if n%100 == 0 {
			runtime.GC() // what is live, not what awaits collection
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("live heap peaked at %.1f MB over %d lines", float64(peak)/(1<<20), n)
	if limit := uint64(24 << 20); peak > limit {
		t.Errorf("live heap reached %d MB (limit %d MB)", peak>>20, limit>>20)
	}
}
