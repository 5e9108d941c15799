package transcript

import (
	"bytes"
	"testing"

	"ccm/internal/synth"
)

// TestValidStructure: every record of a generated transcript is accepted
// and every cut of one (what a torn write leaves) refused; strings that
// JSON forbids only for what they hold are accepted, broken structure is
// not.
func TestValidStructure(t *testing.T) {
	var buf bytes.Buffer
	if _, err := synth.Generate(&buf, synth.Options{Seed: 5, Turns: 4, Version: "2.1.330", Progress: true, Thinking: true, Images: true}); err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if !ValidStructure(l) || !ValidJSON(l) {
			t.Fatalf("a generated record refused: %.80s", l)
		}
		step := max(1, len(l)/500)
		for n := 0; n < len(l); n += step {
			if ValidStructure(l[:n]) {
				t.Fatalf("a record cut at %d of %d bytes was accepted: %.80s", n, len(l), l)
			}
		}
	}
	for _, s := range []string{`{"a":"\x01"}`, `{"a":"\q"}`, `{"a":"\u12"}`, "{\"a\":\"tab\there\"}"} {
		if !ValidStructure([]byte(s)) || ValidJSON([]byte(s)) {
			t.Errorf("%q: a string's content only: want accepted here, refused by ValidJSON", s)
		}
	}
	for _, s := range []string{`{"a":"x}`, `{"a":"x\"}`, `{"a":1,}`, `{"a" 1}`, `{"a":tru}`, `{"a":01}`, `{"a":[1,2}`, `{a:1}`, `{"a":1} x`, ``, `{"a":"x"`} {
		if ValidStructure([]byte(s)) {
			t.Errorf("%q: broken structure accepted", s)
		}
	}
}

// FuzzValidStructure: ValidStructure accepts everything ValidJSON does,
// and agrees with it wherever no string can hold a forbidden escape or
// control character (no backslash and no byte below 0x20 anywhere).
func FuzzValidStructure(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2.5e3,-0,true,false,null]}`, `{"a":"\x01"}`, `[1,]`, `{"a" 1}`, `"\ud800"`, "\"\t\"", `{"a":"b\"c"}`, `[[[[`, `{"k":{"k":{"k":"v"}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, full := ValidStructure(b), ValidJSON(b)
		if full && !got {
			t.Fatalf("%q: valid JSON refused", b)
		}
		plain := !bytes.ContainsFunc(b, func(r rune) bool { return r == '\\' || r < 0x20 })
		if plain && got != full {
			t.Fatalf("%q: structure %v, ValidJSON %v", b, got, full)
		}
	})
}
