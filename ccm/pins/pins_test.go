package pins

import (
	"reflect"
	"testing"

	"ccm/ccm"
)

func TestParseDirectives(t *testing.T) {
	cases := []struct {
		text string
		want []Directive
	}{
		// claude-context-manager's tests (test_purge 14-16).
		{`ccm:pin last level=soft reason="important"`, []Directive{{"last", ccm.PinSoft, "important"}}},
		{`ccm:pin next level=hard`, []Directive{{"next", ccm.PinHard, ""}}},
		{"ccm:pin start\nwork\nccm:pin end", []Directive{{"start", ccm.PinSoft, ""}, {"end", ccm.PinSoft, ""}}},
		// Case-insensitive; level defaults to soft; level=none is not part of
		// the grammar, so it pins soft as claude-context-manager did.
		{`CCM:PIN NEXT LEVEL=HARD reason="Keep"`, []Directive{{"next", ccm.PinHard, "Keep"}}},
		{`ccm:pin last level=none`, []Directive{{"last", ccm.PinSoft, ""}}},
		{`nothing here`, nil},
		{`ccm:pin sideways`, nil},
	}
	for _, c := range cases {
		if got := Parse(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %+v, want %+v", c.text, got, c.want)
		}
	}
}

// ev builds events from a compact script: "I3" is large item 3, a
// directive is "last:hard:why" (level and reason optional).
func ev(script ...string) []Event {
	var out []Event
	for _, s := range script {
		if s[0] == 'I' {
			n := 0
			for _, c := range s[1:] {
				n = n*10 + int(c-'0')
			}
			out = append(out, Event{Item: n})
			continue
		}
		d := Directive{Level: ccm.PinSoft}
		parts := append(splitColon(s), "", "")
		d.Kind = parts[0]
		if parts[1] == "hard" {
			d.Level = ccm.PinHard
		}
		d.Reason = parts[2]
		out = append(out, Event{IsDirective: true, Directive: d})
	}
	return out
}

func splitColon(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func TestResolvePins(t *testing.T) {
	soft := func(r string) Pin { return Pin{ccm.PinSoft, r} }
	hard := func(r string) Pin { return Pin{ccm.PinHard, r} }
	cases := []struct {
		name   string
		events []Event
		want   map[int]Pin
	}{
		// test_purge 17 and 18.
		{"last resolves to the preceding item", ev("I0", "last"), map[int]Pin{0: soft("")}},
		{"next resolves to the following item", ev("next:hard", "I1"), map[int]Pin{1: hard("")}},
		{"last takes the nearest", ev("I1", "I2", "last:hard"), map[int]Pin{2: hard("")}},
		{"last with nothing before", ev("last", "I1"), map[int]Pin{}},
		{"next with nothing after", ev("I1", "next"), map[int]Pin{}},
		{"range", ev("I1", "start:hard:r", "I2", "I3", "end", "I4"), map[int]Pin{2: hard("r"), 3: hard("r")}},
		{"range uses the start's level", ev("start", "I2", "end:hard"), map[int]Pin{2: soft("")}},
		{"second start replaces the first", ev("start:hard:a", "I1", "start::b", "I2", "end"), map[int]Pin{2: soft("b")}},
		{"unclosed start pins nothing", ev("start:hard", "I1", "I2"), map[int]Pin{}},
		{"lone end pins nothing", ev("I1", "end"), map[int]Pin{}},
		{"later directive overrides", ev("next:hard:n", "I1", "last::l"), map[int]Pin{1: soft("l")}},
		{"range overrides an earlier last", ev("start", "I1", "last:hard", "end"), map[int]Pin{1: soft("")}},
		{"two nexts: the later wins", ev("next:hard:a", "next::b", "I5"), map[int]Pin{5: soft("b")}},
	}
	for _, c := range cases {
		if got := Resolve(c.events); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
