// Purge's steps on whole records: bookkeeping and progress records
// dropped and relinked, image metadata, and the toolUseResult copies of
// tool outputs.

package purge

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/synth"

	"github.com/tidwall/gjson"
)

// countKinds counts records by type and by type/subtype (attachment type,
// progress data.type).
func countKinds(data []byte) map[string]int {
	n := map[string]int{}
	for _, l := range objectLines(data) {
		r := gjson.ParseBytes(l)
		typ := r.Get("type").Str
		n[typ]++
		switch typ {
		case "attachment":
			n["attachment/"+r.Get("attachment.type").Str]++
		case "progress":
			n["progress/"+r.Get("data.type").Str]++
		}
	}
	return n
}

// lastOf returns the last record of a kind (type, or attachment/<type>).
func lastOf(data []byte, kind string) []byte {
	var last []byte
	for _, l := range objectLines(data) {
		r := gjson.ParseBytes(l)
		k := r.Get("type").Str
		if k == "attachment" {
			k += "/" + r.Get("attachment.type").Str
		}
		if k == kind {
			last = l
		}
	}
	return last
}

// kept reports whether the record l of the input is in out: by uuid (it
// may have been relinked), or byte for byte when it has none.
func kept(out, l []byte) bool {
	if u := gjson.GetBytes(l, "uuid").Str; u != "" {
		return lineOf(out, u) != nil
	}
	return bytes.Contains(out, l)
}

func TestBookkeepingAndProgress(t *testing.T) {
	in, _ := gen(t, synth.Options{Seed: 31, Turns: 6, Version: "2.1.330", Progress: true})
	before := countKinds(in)
	for _, k := range []string{"progress", "attachment/prompt_snapshot", "api-request-shape", "api-request-blob", "attachment/environment", "attachment/date"} {
		if before[k] < 2 {
			t.Fatalf("fixture has %d %s records", before[k], k)
		}
	}
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	after := countKinds(out)
	if after["progress"] != 0 {
		t.Errorf("%d progress records left", after["progress"])
	}
	if rep.DroppedProgress != before["progress"] {
		t.Errorf("report: %d progress dropped, file had %d", rep.DroppedProgress, before["progress"])
	}
	for _, k := range []string{"attachment/prompt_snapshot", "api-request-shape", "api-request-blob"} {
		if after[k] != 1 {
			t.Errorf("%d %s records left, want the latest only", after[k], k)
		}
		if !kept(out, lastOf(in, k)) {
			t.Errorf("the latest %s was dropped", k)
		}
	}
	wantDropped := before["attachment/prompt_snapshot"] + before["api-request-shape"] + before["api-request-blob"] - 3
	if rep.DroppedBookkeeping != wantDropped {
		t.Errorf("report: %d bookkeeping dropped, want %d", rep.DroppedBookkeeping, wantDropped)
	}
	// System-rendered attachments stay, every one of them.
	for _, k := range []string{"attachment/environment", "attachment/date", "attachment/skill_listing"} {
		if after[k] != before[k] {
			t.Errorf("%s: %d -> %d", k, before[k], after[k])
		}
	}
	// The first record of the file is still a system-rendered attachment.
	first := objectLines(out)
	for _, l := range first {
		typ := gjson.GetBytes(l, "type").Str
		if typ == "file-history-snapshot" {
			continue
		}
		if typ != "attachment" {
			t.Errorf("first chain record is %s, want an attachment", typ)
		}
		break
	}
	e.invariants(in, rep.Path, e.opts(), false)

	// --keep-progress and --keep-bookkeeping keep them.
	e2 := newEnv(t)
	o := e2.opts()
	o.KeepProgress, o.KeepBookkeeping = true, true
	_, out2 := e2.purgeBytes(in, o)
	after2 := countKinds(out2)
	for k, n := range before {
		if after2[k] != n {
			t.Errorf("keep-progress/bookkeeping: %s %d -> %d", k, n, after2[k])
		}
	}
}

// TestProgressRelink: a progress record inside the chain goes and its
// child hangs off the progress record's parent.
func TestProgressRelink(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "go"),
		progress("p1", "u1"),
		progress("p2", "p1"),
		assistantText("a1", "p2", "m1", "ok"),
		userPrompt("u2", "a1", "again"),
		assistantText("a2", "u2", "m2", "ok"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if rep.DroppedProgress != 2 {
		t.Errorf("dropped %d progress records, want 2", rep.DroppedProgress)
	}
	if p := parentOf(t, out, "a1"); p != "u1" {
		t.Errorf("a1 relinked to %q, want u1", p)
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// TestThinkingLatestWithoutMessageID: the latest message is found by its
// place on the chain, not only by message.id, which some writers omit.
func TestThinkingLatestWithoutMessageID(t *testing.T) {
	in := jsonl(
		userPrompt("u1", "", "one"),
		rec("parentUuid", "u1", "isSidechain", false, "type", "assistant", "message", raw(`{"role":"assistant","content":[{"type":"thinking","thinking":"old","signature":"`+sig+`"},{"type":"text","text":"a"}]}`), "uuid", "a1"),
		userPrompt("u2", "a1", "two"),
		rec("parentUuid", "u2", "isSidechain", false, "type", "assistant", "message", raw(`{"role":"assistant","content":[{"type":"thinking","thinking":"latest","signature":"`+sig+`"}]}`), "uuid", "a2"),
		rec("parentUuid", "a2", "isSidechain", false, "type", "assistant", "message", raw(`{"role":"assistant","content":[{"type":"text","text":"b"}]}`), "uuid", "a3"),
	)
	e := newEnv(t)
	rep, out := e.purgeBytes(in, e.opts())
	if rep.ThinkingRemoved != 1 {
		t.Errorf("removed %d thinking blocks, want the old one only", rep.ThinkingRemoved)
	}
	if !bytes.Equal(lineOf(out, "a2"), lineOf(in, "a2")) {
		t.Error("the latest message's thinking was removed")
	}
	e.invariants(in, rep.Path, e.opts(), false)
}

// TestImageMetadata: the store's metadata of every stored image names
// its media type, as written in the transcript. (The media type is read
// from a line buffer the reader reuses while blobs are stored in the
// background; go test -race flags a view kept past its line.)
func TestImageMetadata(t *testing.T) {
	var lines []string
	parent := ""
	for i := 0; i < 40; i++ {
		u, a, r := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i), fmt.Sprintf("r%d", i)
		media := []string{"image/png", "image/jpeg", "image/webp", "image/gif"}[i%4]
		img := `{"type":"image","source":{"type":"base64","media_type":"` + media + `","data":"` + pngData(3000+i) + `"}}`
		lines = append(lines,
			rec("parentUuid", nullable(parent), "isSidechain", false, "type", "user",
				"message", raw(`{"role":"user","content":[{"type":"text","text":"see"},`+img+`]}`), "uuid", u),
			assistantToolUse(a, u, "m"+a, "t"+a, "Bash", `{"command":"cat big"}`),
			// A large line after each image makes the reader refill its buffer.
			toolResult(r, a, "t"+a, js(bigText(r, 300<<10))))
		parent = r
	}
	lines = append(lines, userPrompt("x1", parent, "one"), assistantText("x2", "x1", "mx2", "ok"),
		userPrompt("x3", "x2", "two"), assistantText("x4", "x3", "mx4", "ok"))
	in := jsonl(lines...)
	e := newEnv(t)
	_, out := e.purgeBytes(in, e.opts())
	images := 0
	for i := 0; i < 40; i++ {
		want := []string{"image/png", "image/jpeg", "image/webp", "image/gif"}[i%4]
		for _, st := range stubsIn(lineOf(out, fmt.Sprintf("u%d", i))) {
			meta, err := e.store.Stat(st.Key)
			if err != nil {
				t.Fatal(err)
			}
			images++
			if meta.Source.MediaType != want {
				t.Errorf("u%d: stored media type %q, want %q", i, meta.Source.MediaType, want)
			}
		}
	}
	if images != 40 {
		t.Errorf("%d images stored, want 40", images)
	}
}

// TestToolUseResultCopies: a toolUseResult loses its large members, each
// stored under the key of its bytes (so a copy of content cut elsewhere
// is stored once), and keeps its small ones; it is stubbed whole when it
// is no object, or when its bulk is in members under the threshold.
func TestToolUseResultCopies(t *testing.T) {
	e := newEnv(t)
	body := js(bigText("file", 7000))
	half := js(bigText("half", 3000))
	errText := js("Error: " + bigText("err", 6000))
	in := jsonl(
		userPrompt("u1", "", "start"),
		assistantToolUse("a1", "u1", "m1", "t1", "Write", `{"file_path":"/w.go","content":`+body+`}`),
		toolResult("r1", "a1", "t1", `"File created successfully at: /w.go"`,
			"toolUseResult", raw(`{"type":"create","filePath":"/w.go","content":`+body+`,"structuredPatch":[]}`)),
		assistantToolUse("a2", "r1", "m2", "t2", "Grep", `{"pattern":"x"}`),
		toolResult("r2", "a2", "t2", `"3 matches"`, "toolUseResult", raw(`{"mode":"content","a":`+half+`,"b":`+half+`}`)),
		assistantToolUse("a3", "r2", "m3", "t3", "Bash", `{"command":"false"}`),
		toolResult("r3", "a3", "t3", `"short"`, "toolUseResult", raw(errText)),
		assistantText("a4", "r3", "m4", "done"),
		userPrompt("u2", "a4", "recent one"),
		assistantText("a5", "u2", "m5", "ok"),
		userPrompt("u3", "a5", "recent two"),
		assistantText("a6", "u3", "m6", "bye"),
	)
	rep, out := e.purgeBytes(in, e.opts())

	input, _ := stub.Parse(gjson.GetBytes(lineOf(out, "a1"), "message.content.0.input.content").Str)
	copied, ok := stub.Parse(gjson.GetBytes(lineOf(out, "r1"), "toolUseResult.content").Str)
	if !ok || input.Key == "" || copied.Key != input.Key {
		t.Errorf("Write's content copy: stub %+v, input stub %+v: want one key", copied, input)
	}
	if copied.Key != ccm.KeyOf([]byte(body)) {
		t.Errorf("the copy's key %s is not the key of its bytes", copied.Key)
	}
	if tur := gjson.GetBytes(lineOf(out, "r1"), "toolUseResult"); tur.Get("filePath").Str != "/w.go" || tur.Get("structuredPatch").Raw != "[]" {
		t.Errorf("toolUseResult lost its small fields: %.300s", tur.Raw)
	}
	for _, u := range []string{"r2", "r3"} {
		v := gjson.GetBytes(lineOf(out, u), "toolUseResult")
		st, ok := stub.Parse(v.Str)
		orig := originalValue(t, in, u, "toolUseResult")
		if !ok || st.Key != ccm.KeyOf(orig) {
			t.Errorf("%s: toolUseResult not stubbed whole: %.200s", u, v.Raw)
		}
	}
	if rep.Stubs != 4 {
		t.Errorf("%d stubs, want 4", rep.Stubs)
	}
	e.invariants(in, rep.Path, e.opts(), false)

	// Restore puts every copy back byte for byte.
	o := e.opts()
	p := e.write("copies.jsonl", in)
	e.purge(p, o)
	if _, err := restoreFile(context.Background(), p, o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); !bytes.Equal(got, in) {
		reportFirstDiff(t, in, got)
	}
}

// TestToolUseResultPurgedAgain: a toolUseResult that holds a stub is
// never cut whole by a later purge, even with a threshold that its other
// members together exceed: that would store a stub and nest stubs.
func TestToolUseResultPurgedAgain(t *testing.T) {
	e := newEnv(t)
	mid := js(bigText("mid", 1500))
	in := jsonl(
		userPrompt("u1", "", "start"),
		assistantToolUse("a1", "u1", "m1", "t1", "Bash", `{"command":"make"}`),
		toolResult("r1", "a1", "t1", `"built"`, "toolUseResult",
			raw(`{"stdout":`+js(bigText("out", 7000))+`,"a":`+mid+`,"b":`+mid+`}`)),
		assistantText("a2", "r1", "m2", "done"),
		userPrompt("u2", "a2", "recent one"),
		assistantText("a3", "u2", "m3", "ok"),
		userPrompt("u3", "a3", "recent two"),
		assistantText("a4", "u3", "m4", "bye"),
	)
	p := e.write("again.jsonl", in)
	e.purge(p, e.opts())
	once := readFile(t, p)
	if st, ok := stub.Parse(gjson.GetBytes(lineOf(once, "r1"), "toolUseResult.stdout").Str); !ok || st.Key == "" {
		t.Fatalf("first purge: stdout not stubbed: %.300s", lineOf(once, "r1"))
	}
	o := e.opts()
	o.Threshold = 1000
	rep, twice := e.purge(p, o)
	tur := gjson.GetBytes(lineOf(twice, "r1"), "toolUseResult")
	if !tur.IsObject() {
		t.Fatalf("second purge cut the toolUseResult holding a stub whole: %.300s", tur.Raw)
	}
	// Its other large members are cut now, the stub stays as it was.
	for _, k := range []string{"a", "b"} {
		if _, ok := stub.Parse(tur.Get(k).Str); !ok {
			t.Errorf("member %s not stubbed at threshold 1000", k)
		}
	}
	if tur.Get("stdout").Raw != gjson.GetBytes(lineOf(once, "r1"), "toolUseResult.stdout").Raw {
		t.Error("the first stub changed")
	}
	if rep.Stubs != 2 {
		t.Errorf("second purge: %d stubs, want 2", rep.Stubs)
	}
	// One restore brings back the original.
	if _, err := restoreFile(context.Background(), p, o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); !bytes.Equal(got, in) {
		reportFirstDiff(t, in, got)
	}
}
