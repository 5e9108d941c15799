package ccm

import "testing"

func TestParsePinLevel(t *testing.T) {
	for in, want := range map[string]PinLevel{"none": PinNone, "": PinNone, "soft": PinSoft, "HARD": PinHard, " hard ": PinHard} {
		if got, err := ParsePinLevel(in); err != nil || got != want {
			t.Errorf("ParsePinLevel(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"medium", "1", "hardest"} {
		if _, err := ParsePinLevel(bad); err == nil {
			t.Errorf("ParsePinLevel(%q) accepted", bad)
		}
	}
	if PinNone >= PinSoft || PinSoft >= PinHard {
		t.Fatal("levels not ordered")
	}
}
