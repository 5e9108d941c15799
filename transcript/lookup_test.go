package transcript

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// Lookup must find what gjson.Get finds, at the same offset, with the
// same raw bytes, for every kind of value a record holds.
func TestLookupAgreesWithGjson(t *testing.T) {
	big := strings.Repeat(`line with \"quotes\" and \\ escapes\n`, 5000)
	rec := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"` + big + `"}]},` +
		`"toolUseResult":{"stdout":"` + big + `","stderr":"","interrupted":false},"n":12.5,"ok":true,"no":false,"nil":null,` +
		`"k\u0065y":"escaped key","input":{"file_path":"/a/b.go","content":"x"}, "spaced" :  [ 1 , 2 ] }`
	for _, path := range []string{
		"type", "message", "message.role", "message.content", "toolUseResult", "toolUseResult.stdout",
		"toolUseResult.interrupted", "n", "ok", "no", "nil", "input.file_path", "input.content", "spaced",
	} {
		want := gjson.Get(rec, path)
		got := Lookup(rec, path)
		if !want.Exists() {
			t.Fatalf("%s: fixture broken, gjson finds nothing", path)
		}
		if got.Raw != want.Raw || got.Index != want.Index || got.Type != want.Type {
			t.Errorf("%s: Lookup = (%v, %d, %.20q), gjson = (%v, %d, %.20q)", path, got.Type, got.Index, got.Raw, want.Type, want.Index, want.Raw)
		}
		if got.Raw != rec[got.Index:got.Index+len(got.Raw)] {
			t.Errorf("%s: Raw is not the bytes at Index", path)
		}
	}
	// A key written with an escape is found by its decoded name.
	if got := Lookup(rec, "key"); got.Raw != `"escaped key"` {
		t.Errorf("escaped key: got %q", got.Raw)
	}
	// Lookup leaves strings undecoded: that is its point.
	if s := Lookup(rec, "toolUseResult.stdout"); s.Str != "" {
		t.Errorf("Str decoded (%d bytes)", len(s.Str))
	}
}

func TestLookupMissingAndInvalid(t *testing.T) {
	rec := `{"a":{"b":1},"c":[{"d":2}],"s":"text"}`
	for _, path := range []string{"x", "a.x", "a.b.c", "s.x", "c.d", "c.0"} {
		if r := Lookup(rec, path); r.Exists() {
			t.Errorf("%s: found %q in %s", path, r.Raw, rec)
		}
	}
	// Broken structure up to the value is never found (contents, and what
	// follows the value, are the validator's job).
	for _, bad := range []string{``, `[1,2]`, `{"a":}`, `{"a":"x}`, `{"a":"x\"}`, `{"a":{"b":1`, `{"a" 1}`, `not json`, `{"b":1 "a":2}`} {
		if r := Lookup(bad, "a"); r.Exists() {
			t.Errorf("invalid %q: found %q", bad, r.Raw)
		}
	}
	// Backslashes before a quote: an even run ends the string.
	for raw, want := range map[string]string{
		`{"a":"x\\\\","b":1}`:         `"x\\\\"`,
		`{"a":"x\\\"y","b":1}`:        `"x\\\"y"`,
		`{"a":"\\","b":1}`:            `"\\"`,
		`{"a":["]",{"}":"{"}],"b":1}`: `["]",{"}":"{"}]`,
	} {
		if r := Lookup(raw, "a"); r.Raw != want || Lookup(raw, "b").Raw != "1" {
			t.Errorf("%s: a = %q, want %q; b = %q", raw, r.Raw, want, Lookup(raw, "b").Raw)
		}
	}
	// The first of duplicate keys wins, as with gjson.
	if r := Lookup(`{"a":1,"a":2}`, "a"); r.Raw != "1" {
		t.Errorf("duplicate key: got %q", r.Raw)
	}
}

// ForEachMember and ForEachElement must yield what gjson's ForEach yields
// (keys, raw values, offsets in the line, types) on a real record, nested
// values included, without decoding the values.
func TestForEachAgreesWithGjson(t *testing.T) {
	big := strings.Repeat(`out \"q\" \\ \n`, 3000)
	rec := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"` + big + `"},` +
		` {"type":"text","text":"hi"} , 3, null ]},"toolUseResult":{"stdout":"` + big + `","st\u0061tus":"ok","n":[1,{"a":2}],"e":{}},"x":[]}`
	type item struct {
		key, raw string
		index    int
		typ      gjson.Type
	}
	collect := func(v gjson.Result) (want, got []item) {
		v.ForEach(func(k, m gjson.Result) bool {
			want = append(want, item{k.Str, m.Raw, m.Index, m.Type})
			return true
		})
		if v.IsObject() {
			ForEachMember(v, func(k string, m gjson.Result) bool {
				if m.Str != "" {
					t.Errorf("member %s decoded", k)
				}
				got = append(got, item{k, m.Raw, m.Index, m.Type})
				return true
			})
		} else {
			ForEachElement(v, func(e gjson.Result) bool {
				got = append(got, item{"", e.Raw, e.Index, e.Type})
				return true
			})
		}
		return want, got
	}
	for _, path := range []string{"message", "message.content", "message.content.0", "toolUseResult", "toolUseResult.n", "toolUseResult.e", "x"} {
		v := gjson.Get(rec, path)
		if !v.Exists() {
			t.Fatalf("%s: fixture broken", path)
		}
		want, got := collect(v)
		if len(got) != len(want) {
			t.Errorf("%s: %d items, gjson %d", path, len(got), len(want))
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s item %d: got (%q, %.20q, %d, %v), gjson (%q, %.20q, %d, %v)", path, i,
					got[i].key, got[i].raw, got[i].index, got[i].typ, want[i].key, want[i].raw, want[i].index, want[i].typ)
			}
		}
	}
	// Stopping early: fn returning false ends the walk.
	n := 0
	ForEachMember(gjson.Get(rec, "toolUseResult"), func(string, gjson.Result) bool { n++; return false })
	if n != 1 {
		t.Errorf("walk went on after false: %d calls", n)
	}
}

// Members must find, in one walk, what Lookup finds key by key, keys in
// any order, duplicates and missing keys included; LookupOpen what Lookup
// finds, an array or object cut open at its end, whose elements and
// members are still those of the closed value.
func TestMembersAndLookupOpenAgreeWithLookup(t *testing.T) {
	big := strings.Repeat(`out \"q\" \\ \n`, 2000)
	recs := []string{
		`{"parentUuid":null,"isSidechain":false,"message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"` + big + `"}}],"usage":{"input_tokens":3}},"type":"assistant","uuid":"u"}`,
		`{"type":"user","message":{"role":"user","content":"` + big + `"},"type":"dup","k\u0065y":1}`,
		`{"type":"system","subtype":"x","n":1}`,
		`{"message":{"content":{"a":[1,2],"b":"x"}},"isSidechain":true}`,
		`{"message":"plain","type":"user"}`,
		`{}`,
	}
	keys := []string{"type", "isSidechain", "message", "key", "missing"}
	for _, rec := range recs {
		out := make([]gjson.Result, len(keys))
		Members(rec, keys, out)
		for i, k := range keys {
			if want := Lookup(rec, k); out[i].Raw != want.Raw || out[i].Index != want.Index || out[i].Type != want.Type {
				t.Errorf("%.40s: Members[%s] = %.20q at %d, Lookup = %.20q at %d", rec, k, out[i].Raw, out[i].Index, want.Raw, want.Index)
			}
		}
		m := Lookup(rec, "message")
		want, got := Lookup(m.Raw, "content"), LookupOpen(m.Raw, "content")
		if want.Exists() != got.Exists() || got.Index != want.Index || got.Type != want.Type || !strings.HasPrefix(got.Raw, want.Raw) {
			t.Errorf("%.40s: LookupOpen = %.20q, Lookup = %.20q", rec, got.Raw, want.Raw)
			continue
		}
		if want.Type == gjson.JSON {
			var a, b []string
			ForEachElement(want, func(e gjson.Result) bool { a = append(a, e.Raw); return true })
			ForEachElement(got, func(e gjson.Result) bool { b = append(b, e.Raw); return true })
			ForEachMember(want, func(k string, e gjson.Result) bool { a = append(a, k, e.Raw); return true })
			ForEachMember(got, func(k string, e gjson.Result) bool { b = append(b, k, e.Raw); return true })
			if strings.Join(a, "\x00") != strings.Join(b, "\x00") || len(a) == 0 {
				t.Errorf("%.40s: blocks of the open content differ: %d vs %d", rec, len(b), len(a))
			}
		} else if got.Raw != want.Raw {
			t.Errorf("%.40s: scalar content %.20q, want %.20q", rec, got.Raw, want.Raw)
		}
	}
}
