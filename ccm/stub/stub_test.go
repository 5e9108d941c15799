package stub

import (
	"strings"
	"testing"

	"ccm/ccm"
)

var (
	keyA = ccm.Key("sha256:" + strings.Repeat("ab", 32))
	keyB = ccm.Key("b2s:0123456789abcdef")
)

func TestStubString(t *testing.T) {
	st := Stub{Key: keyA, Source: "Bash make\ntest", Desc: "run the tests", Bytes: 13000, Lines: 212, Exit: 2, Pinned: ccm.PinSoft}
	want := "[CCM_CACHED]\nkey: " + string(keyA) + "\nsource: Bash make test\ndesc: run the tests\nbytes: 13000\nlines: 212\nexit: 2\npinned: soft\nget: ccm cache get " + string(keyA) + "\n[/CCM_CACHED]"
	if got := st.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	minimal := Stub{Key: keyA}.String()
	if minimal != "[CCM_CACHED]\nkey: "+string(keyA)+"\nsource: unknown\nbytes: 0\nlines: 0\npinned: none\nget: ccm cache get "+string(keyA)+"\n[/CCM_CACHED]" {
		t.Fatalf("minimal stub:\n%s", minimal)
	}
	back, ok := Parse(st.String())
	st.Source = "Bash make test"
	if !ok || back != st {
		t.Fatalf("round trip: %+v %v", back, ok)
	}
}

func TestParseStubVariants(t *testing.T) {
	cases := []struct {
		name, text string
		want       Stub
	}{
		{"v1", "[CCM_CACHED]\nkey: " + string(keyA) + "\npath: ~/.claude/cache/ccm/blobs/" + keyA.Hex() + ".zst\nbytes: 5000\nlines: 50\nexit: 1\npinned: hard\n[/CCM_CACHED]",
			Stub{Key: keyA, Bytes: 5000, Lines: 50, Exit: 1, Pinned: ccm.PinHard}},
		{"v1 path only", "[CCM_CACHED]\npath: ~/.claude/cache/ccm/blobs/" + keyA.Hex() + ".gz\nbytes: 5\nlines: 0\nexit: 0\npinned: none\n[/CCM_CACHED]",
			Stub{Key: keyA, Bytes: 5}},
		{"v2 image", "  [CCM_CACHED]\nkey: " + string(keyA) + "\nsource: Image (PNG)\nbytes: 54000\npinned: soft\n[/CCM_CACHED]",
			Stub{Key: keyA, Source: "Image (PNG)", Bytes: 54000, Pinned: ccm.PinSoft}},
		{"v3 key inside", "[CCM_CACHED]\nkey: " + string(keyB) + "\n~tokens: 12k\nlines: 487\nexit: 3\n[/CCM_CACHED]\nRetrieve: ccm-get.py " + string(keyB) + " [--grep PATTERN]",
			Stub{Key: keyB, Lines: 487, Exit: 3}},
		{"v3 key on retrieve line", "[CCM_CACHED]\n~tokens: 12k\nlines: 487\ncheck: 1a2b\n[/CCM_CACHED]\nRetrieve: ccm-get.py " + string(keyB) + " [--grep PATTERN] [--head N]\n",
			Stub{Key: keyB, Lines: 487}},
	}
	for _, c := range cases {
		got, ok := Parse(c.text)
		if !ok || got != c.want {
			t.Errorf("%s: got %+v %v, want %+v", c.name, got, ok, c.want)
		}
	}
	for _, bad := range []string{
		"", "Regular content", "[CCM_CACHED]\nkey: " + string(keyA) + "\n", // no end marker
		"[CCM_CACHED]\n~tokens: 1k\nlines: 4\n[/CCM_CACHED]",                 // v3 without any key
		"prefix text [CCM_CACHED]\nkey: " + string(keyA) + "\n[/CCM_CACHED]", // not a stub, contains one
		"[CCM_CACHED]\nkey: sha256:abc123\n[/CCM_CACHED]",                    // claude-context-manager's tests used this short key
		"[CCM_CACHED]\nkey: sha256:../../../settings\n[/CCM_CACHED]",
		"[CCM_CACHED]\npath: ../../../settings.json\n[/CCM_CACHED]",
	} {
		if st, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) = %+v", bad, st)
		}
	}
}

func TestFindStubs(t *testing.T) {
	s1 := Stub{Key: keyA, Source: "Read /x", Bytes: 10, Lines: 1}.String()
	s3 := "[CCM_CACHED]\n~tokens: 3k\nlines: 9\n[/CCM_CACHED]\nRetrieve: ccm-get.py " + string(keyB) + " [--grep P]"
	text := "None - output was large.\n" + s1 + "\nthen more text\n" + s3 + "\nand [CCM_CACHED] without an end"
	ms := Find(text)
	if len(ms) != 2 {
		t.Fatalf("found %d stubs", len(ms))
	}
	if text[ms[0].Start:ms[0].End] != s1 || ms[0].Stub.Key != keyA {
		t.Errorf("first: %q", text[ms[0].Start:ms[0].End])
	}
	if text[ms[1].Start:ms[1].End] != s3 || ms[1].Stub.Key != keyB {
		t.Errorf("second: %q", text[ms[1].Start:ms[1].End])
	}
}

func FuzzParseStub(f *testing.F) {
	f.Add(Stub{Key: keyA, Source: "Bash ls", Bytes: 3, Lines: 1, Exit: 1, Pinned: ccm.PinHard}.String())
	f.Add("[CCM_CACHED]\n~tokens: 1k\n[/CCM_CACHED]\nRetrieve: x " + string(keyB))
	f.Fuzz(func(t *testing.T, text string) {
		for _, m := range Find(text) {
			if m.Start < 0 || m.End > len(text) || m.Start >= m.End {
				t.Fatalf("bad range %d..%d of %d", m.Start, m.End, len(text))
			}
			if _, err := ccm.ParseKey(string(m.Stub.Key)); err != nil {
				t.Fatalf("invalid key returned: %v", err)
			}
			// A rendered stub parses back to itself (Source/Desc made one-line).
			back, ok := Parse(m.Stub.String())
			if !ok || back.Key != m.Stub.Key || back.Bytes != m.Stub.Bytes || back.Pinned != m.Stub.Pinned {
				t.Fatalf("re-render of %+v parsed as %+v %v", m.Stub, back, ok)
			}
		}
	})
}

func TestPyCache16_StubContents(t *testing.T) {
	st := Stub{Key: keyA, Bytes: 12345, Lines: 100, Pinned: ccm.PinSoft}.String()
	for _, want := range []string{"[CCM_CACHED]", "[/CCM_CACHED]", string(keyA), "12345", "soft"} {
		if !strings.Contains(st, want) {
			t.Errorf("stub lacks %q:\n%s", want, st)
		}
	}
}

func TestPyCache17_StubParse(t *testing.T) {
	st, ok := Parse(Stub{Key: keyA, Bytes: 5000, Lines: 50, Exit: 1, Pinned: ccm.PinHard}.String())
	if !ok || st.Key != keyA || st.Bytes != 5000 || st.Lines != 50 || st.Exit != 1 || st.Pinned != ccm.PinHard {
		t.Fatalf("%+v %v", st, ok)
	}
}

func TestPyCache18_IsStub(t *testing.T) {
	if !Is(Stub{Key: keyA, Bytes: 100, Lines: 10}.String()) || Is("Regular content") || Is("") {
		t.Fatal("IsStub")
	}
}

// TestParseRejectsBadKeys: a stub's key comes from outside (claude-context-manager
// let "../../settings" reach a path); Parse takes only valid keys.
func TestParseRejectsBadKeys(t *testing.T) {
	bad := []ccm.Key{"../../settings", "../settings", "sha256:../../settings", "b2s:../../notes", "sha256:" + ccm.Key(strings.Repeat("a", 63)) + "/",
		"sha256:" + ccm.Key(strings.Repeat("A", 64)), "b2s:0123456789abcdeF", "", "settings", "/etc/passwd", "sha256:" + ccm.Key(strings.Repeat("a", 64)) + "\n"}
	for _, k := range bad {
		if _, ok := Parse("[CCM_CACHED]\nkey: " + string(k) + "\nbytes: 1\n[/CCM_CACHED]"); ok && !strings.HasSuffix(string(k), "\n") {
			t.Errorf("Parse took key %q", k)
		}
	}
}
