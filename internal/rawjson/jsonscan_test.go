package rawjson

import "testing"

// TestValueEnd: every kind of value ends where its last byte is, escaped
// quotes and brackets inside strings do not count, and a value that does
// not end reports -1.
func TestValueEnd(t *testing.T) {
	for in, want := range map[string]int{
		`"a\"b" ,`:                   6,
		`"a\\" ,`:                    5,
		`"\\\"" ,`:                   6,
		`{"k":"}]\"{","v":[1,{}]} x`: 24,
		`[ "[" , "]" ] ,`:            13,
		`12.5e3,`:                    6,
		`true}`:                      4,
		`null`:                       4,
		`"open`:                      -1,
		`{"k":[1,2}`:                 -1,
		`,`:                          -1,
		``:                           -1,
	} {
		if got := ValueEnd([]byte(in), 0); got != want {
			t.Errorf("ValueEnd(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestStringEnd starts inside the string, after its opening quote.
func TestStringEnd(t *testing.T) {
	for in, want := range map[string]int{
		`"" x`:     2,
		`"\\\\" x`: 6,
		`"é\"✓" x`: len(`"é\"✓"`),
		`"\"`:      -1,
	} {
		if got := StringEnd([]byte(in), 1); got != want {
			t.Errorf("StringEnd(%q) = %d, want %d", in, got, want)
		}
	}
}
