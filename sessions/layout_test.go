package sessions

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The todos index finds what the glob todos/<id>-*.json finds, and only
// that: not another session whose id starts with this one's, not other
// extensions.
func TestRelatedInTodosIndex(t *testing.T) {
	cfg := t.TempDir()
	todos := filepath.Join(cfg, "todos")
	if err := os.MkdirAll(todos, 0o700); err != nil {
		t.Fatal(err)
	}
	const id = "0b6c1c2e-1111-2222-3333-444455556666"
	for _, name := range []string{
		id + "-agent-" + id + ".json",
		id + "-agent-abc.json",
		id + "-.json",
		id + "7-agent-x.json", // another session
		id + ".json",          // no '-' after the id
		id + "-agent-x.txt",   // not JSON
		"other-agent-" + id + ".json",
	} {
		if err := os.WriteFile(filepath.Join(todos, name), []byte("[]"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		filepath.Join(todos, id+"-.json"),
		filepath.Join(todos, id+"-agent-"+id+".json"),
		filepath.Join(todos, id+"-agent-abc.json"),
	}
	paths := func(files []File) []string {
		var out []string
		for _, f := range files {
			out = append(out, f.Path)
		}
		return out
	}
	idx := ReadTodos(cfg)
	withIndex, _, _ := RelatedIn(cfg, id, idx)
	withGlob, _, _ := Related(cfg, id)
	if got := paths(withIndex); !reflect.DeepEqual(got, want) {
		t.Errorf("with the index: %q, want %q", got, want)
	}
	if got := paths(withGlob); !reflect.DeepEqual(got, want) {
		t.Errorf("with the glob: %q, want %q", got, want)
	}
	if files, _, _ := RelatedIn(cfg, "missing", idx); len(files) != 0 {
		t.Errorf("a session without todos got %q", paths(files))
	}
}
