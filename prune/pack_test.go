package prune

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"ccm/ccm"
)

// batchAt stores contents through one batch (one pack) as if at time at.
func batchAt(t *testing.T, s *ccm.Store, contents []string, at time.Time) []ccm.Key {
	t.Helper()
	s.Now = func() time.Time { return at }
	defer func() { s.Now = nil }()
	b := s.NewBatch()
	var ks []ccm.Key
	for _, c := range contents {
		k, err := b.Put(context.Background(), []byte(c), ccm.Source{ToolName: "Bash"}, ccm.PinNone, "")
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	return ks
}

// Prune over packs: gc deletes unreferenced blobs of a pack; the dry run
// prints the deletions and the repack (the pack rewritten, each copied
// blob with its reason) and changes nothing; the real run makes the
// deleted blobs unreadable, keeps the others readable and shrinks the
// packs.
func TestPruneRepacksPacks(t *testing.T) {
	s, claude := testStore(t)
	old := time.Now().Add(-48 * time.Hour)
	var contents []string
	for i := range 10 {
		contents = append(contents, fmt.Sprintf("output %d\n%s", i, strings.Repeat(fmt.Sprintf("line %d of a long output\n", i), 200+i)))
	}
	ks := batchAt(t, s, contents, old)
	var refs []string
	for _, k := range ks[:3] { // 3 referenced, 7 not: the pack is 70% unused after gc
		refs = append(refs, `{"message":{"content":`+jsonString(stubText(k))+`}}`)
	}
	writeFile(t, claude+"/projects/p/s.jsonl", strings.Join(refs, "\n")+"\n")

	dry, err := Prepare(context.Background(), s, Policy{GC: true}, Options{ClaudeDir: claude, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	dry.WritePlan(&out, false)
	dry.Close()
	text := out.String()
	if strings.Count(text, "\ndelete  gc") != 6 || !strings.HasPrefix(text, "delete  gc") ||
		!strings.Contains(text, "repack  pack  packs/") || strings.Count(text, "move    pack  sha256:") != 3 ||
		!strings.Contains(text, "% unused (at least 20%): its 3 live blobs are copied") {
		t.Fatalf("dry-run plan:\n%s", text)
	}
	if sum := dry.Summary(nil); !strings.Contains(sum, "repack: would rewrite 1 packs (3 blobs copied)") {
		t.Fatalf("summary %q", sum)
	}
	for _, k := range ks {
		if !exists(s, k) {
			t.Fatal("dry run deleted")
		}
	}

	p, res := run(t, s, claude, Policy{GC: true})
	if res.Deleted != 7 || res.RepackFreed <= 0 {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(p.Summary(res), "repack: rewrote 1 packs (3 blobs copied) and removed 0") {
		t.Fatalf("summary %q", p.Summary(res))
	}
	s2, _ := ccm.Open(s.Root())
	for i, k := range ks {
		got, err := s2.Get(context.Background(), k)
		if i < 3 && (err != nil || string(got) != contents[i]) {
			t.Fatalf("kept blob %d: %v", i, err)
		}
		if i >= 3 && err == nil {
			t.Fatalf("deleted blob %d still reads", i)
		}
	}
	l, _ := s2.List(context.Background(), nil)
	if st := ccm.Summarize(l); st.Packs != 1 || st.PackDeadBytes != 0 || st.Items != 3 {
		t.Fatalf("stats after prune %+v", st)
	}
}
