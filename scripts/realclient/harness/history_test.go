package harness

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A transcript with a sidechain record, a record whose parent is missing,
// and a metadata line; the request carries two of its records.
const historyTranscript = `{"type":"summary","summary":"s"}
{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s-1","message":{"role":"user","content":"first question here"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s-1","message":{"role":"assistant","content":[{"type":"text","text":"first answer"},{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}
{"type":"user","uuid":"side","parentUuid":"a1","sessionId":"s-1","isSidechain":true,"message":{"role":"user","content":"subagent prompt"}}
{"type":"user","uuid":"u2","parentUuid":"gone","sessionId":"s-1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"out"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"u2","sessionId":"s-2","message":{"role":"assistant","content":[{"type":"text","text":"  "}]}}
not json
`

func TestHistoryCoverage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	if err := os.WriteFile(path, []byte(historyTranscript), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := analyzeTranscript(path)
	if err != nil {
		t.Fatal(err)
	}
	if sid := pickSessionID(path, info); sid != "s-1" {
		t.Fatalf("session id %q, want the most common s-1", sid)
	}
	if info.chainBreak == nil || info.chainBreak.Line != 5 || info.chainBreak.MissingParent != "gone" {
		t.Fatalf("chain break %+v, want line 5 missing gone", info.chainBreak)
	}
	wantTypes := map[string]int{"summary": 1, "user": 3, "assistant": 2, "<bad line>": 1}
	if !reflect.DeepEqual(info.types, wantTypes) {
		t.Fatalf("types %v", info.types)
	}
	// The request has u1's text wrapped in a longer one, a1 complete and
	// u2's result: u1, a1, u2 found; a2 has only whitespace (empty); the
	// sidechain record is missing.
	body := []byte(`{"messages":[
	 {"role":"user","content":[{"type":"text","text":"<context>first question here</context>"}]},
	 {"role":"assistant","content":[{"type":"text","text":"first answer"},{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"out"},{"type":"text","text":"ping"}]}]}`)
	h := coverage(info, body)
	want := History{UARecords: 5, Found: 3, Missing: 1, MissingSidechain: 1, Empty: 1, OnChain: 2, OnChainFound: 1,
		EarliestFoundLine: 2, MissingLines: []int{4}}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("history %+v\nwant    %+v", h, want)
	}
}

func TestSubstitute(t *testing.T) {
	got := Substitute(`{"command":"{{OUT}}/hook.sh","file":"{{PROJECT}}/a"}`, map[string]string{"OUT": `/tmp/a "b"`, "PROJECT": "/p"})
	if want := `{"command":"/tmp/a \"b\"/hook.sh","file":"/p/a"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
