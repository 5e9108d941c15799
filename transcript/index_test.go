package transcript

import (
	"errors"
	"strings"
	"testing"
)

// A file of JSON objects none of which names a type is not a transcript;
// one record among them makes it one (the others are then unknown lines
// of a transcript, as check reports them).
func TestBuildRefusesUntypedObjects(t *testing.T) {
	untyped := "{\"event\":\"login\",\"ts\":1}\n{\"event\":\"logout\",\"ts\":2}\n"
	_, err := Build(strings.NewReader(untyped), BuildOptions{})
	if !errors.Is(err, ErrUntyped) || !errors.Is(err, ErrNotTranscript) {
		t.Fatalf("untyped objects: err = %v, want %v", err, ErrUntyped)
	}
	typed := untyped + `{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}` + "\n"
	ix, err := Build(strings.NewReader(typed), BuildOptions{})
	if err != nil || ix.Len() != 3 {
		t.Fatalf("with one record: %v, %d records", err, ix.Len())
	}
	_, err = Build(strings.NewReader("not json\n"), BuildOptions{})
	if !errors.Is(err, ErrNoObjects) {
		t.Fatalf("garbage: err = %v, want %v", err, ErrNoObjects)
	}
}
