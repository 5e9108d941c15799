package archive

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"ccm/ccm"
	"ccm/ccm/stub"
)

// stubLine is a transcript record whose tool result is a stub of k.
func stubLine(id string, k ccm.Key) string {
	s, _ := json.Marshal(stub.Stub{Key: k, Source: "Bash make"}.String())
	return `{"type":"user","sessionId":"` + id + `","message":{"role":"user","content":[{"type":"tool_result","content":` + string(s) + `}]}}` + "\n"
}

// An archive carries the content of every stub of its transcripts and
// backups (a zstd backup too), of the stubs inside that content, b2s keys
// included, with pins and sources; unarchive into an empty store puts it
// all back, and names the one stub whose content was never in the store.
func TestContentRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	st, err := ccm.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	put := func(data string, pin ccm.PinLevel) ccm.Key {
		k, err := st.Put(ctx, []byte(data), ccm.Source{Type: stub.RawValueType, ToolName: "Bash"}, pin, "kept")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a := put(`"output of make"`, ccm.PinHard)
	d := put(`"deep output"`, ccm.PinNone)
	c := put(stubLine(f.id, d), ccm.PinNone) // an archived region holding a stub
	fz := put(`"only the backup has it"`, ccm.PinSoft)
	// A b2s key, as an older tool wrote them.
	bdata := []byte(`"older tool's output"`)
	h := ccm.Key("b2s:0000000000000000").NewHash()
	h.Write(bdata)
	b := ccm.Key("b2s:" + hex.EncodeToString(h.Sum(nil)))
	batch := st.NewBatch()
	if err := batch.PutChecked(ctx, b, bdata, ccm.Source{Type: "text"}, ccm.PinNone, ""); err != nil {
		t.Fatal(err)
	}
	if err := batch.Commit(); err != nil {
		t.Fatal(err)
	}
	e := ccm.KeyOf([]byte("never stored"))
	main := filepath.Join(f.cfg, "projects", f.folder, f.id+".jsonl")
	data := stubLine(f.id, a) + stubLine(f.id, b) + stubLine(f.id, c) + stubLine(f.id, e)
	os.WriteFile(main, []byte(data), 0o600)
	// A zstd backup whose stub only it holds.
	var zb bytes.Buffer
	zw, _ := zstd.NewWriter(&zb)
	zw.Write([]byte(stubLine(f.id, fz)))
	zw.Close()
	os.WriteFile(main+".backup.20260101_000000.000.zst", zb.Bytes(), 0o600)
	old := time.Now().Add(-40 * 24 * time.Hour)
	os.Chtimes(main, old, old)
	o := f.opts(t)
	o.Store = st
	res, err := Create(ctx, f.source(t), o)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	var got []string
	for _, c := range m.Content {
		got = append(got, c.Key)
	}
	want := []string{string(a), string(b), string(c), string(d), string(fz)}
	sort.Strings(want)
	if !equal(got, want) {
		t.Errorf("content %v, want %v", got, want)
	}
	if !equal(m.Missing, []string{string(e)}) {
		t.Errorf("missing %v, want %s", m.Missing, e)
	}
	for _, k := range append(want, string(e)) {
		if !contains(m.Refs, k) {
			t.Errorf("refs lack %s", k)
		}
	}
	// A new, empty store.
	st2, _ := ccm.Open(filepath.Join(t.TempDir(), "store2"))
	x, err := Extract(ctx, res.Archive, f.cfg, ExtractOptions{Now: time.Now(), Store: st2})
	if err != nil {
		t.Fatal(err)
	}
	if x.Content != 5 || !equal(x.StaysStub, []string{string(e)}) {
		t.Errorf("content %d, stays stub %v", x.Content, x.StaysStub)
	}
	for _, k := range []ccm.Key{a, b, c, d, fz} {
		want, _ := st.Get(ctx, k)
		got, err := st2.Get(ctx, k)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v", k, err)
		}
		m1, _ := st.Stat(k)
		m2, _ := st2.Stat(k)
		if m2 == nil || m1.Pinned.Level != m2.Pinned.Level || m1.Source.Type != m2.Source.Type {
			t.Errorf("%s: meta %+v, want %+v", k, m2, m1)
		}
	}
	if got, _ := os.ReadFile(main); string(got) != data {
		t.Error("transcript not restored")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
