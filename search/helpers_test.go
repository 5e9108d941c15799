package search

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/synth"
)

// env is a config dir, a store and a ccm home for one test.
type env struct {
	t      *testing.T
	config string
	home   string
	store  *ccm.Store
	redact string
	remote *Remote // object storage the updates index too
}

func newEnv(t *testing.T, config string) *env {
	t.Helper()
	base := t.TempDir()
	if config == "" {
		config = filepath.Join(base, "claude")
		os.MkdirAll(filepath.Join(config, "projects"), 0o700)
	}
	st, err := ccm.Open(filepath.Join(base, "store"))
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, config: config, home: filepath.Join(base, "home"), store: st}
}

func (e *env) sources() Sources {
	res, err := ParseRedact(e.redact)
	if err != nil {
		e.t.Fatal(err)
	}
	src := Sources{ConfigDir: e.config, ArchiveRoot: filepath.Join(e.home, "archive"), Redact: res, Remote: e.remote}
	if e.store == nil {
		return src // no store
	}
	src.Resolve, src.Has = func(k string) ([]byte, error) {
		key, err := ccm.ParseKey(k)
		if err != nil {
			return nil, err
		}
		return e.store.Get(context.Background(), key)
	}, func(k string) bool {
		_, err := e.store.Stat(ccm.Key(k))
		return err == nil
	}
	return src
}

// partOptions are the sources' as the archive writer passes them.
func (e *env) partOptions() PartOptions {
	src := e.sources()
	return PartOptions{Resolve: src.Resolve, Has: src.Has, Redact: src.Redact}
}

// update brings the index up to date and returns what it did.
func (e *env) update() UpdateStats {
	e.t.Helper()
	ix, err := Open(context.Background(), Dir(e.home))
	if err != nil {
		e.t.Fatal(err)
	}
	defer ix.Close()
	st, err := ix.Update(context.Background(), e.sources())
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// search updates the index and runs a query of words (or a regex when
// the query starts with "re:").
func (e *env) search(query string, mod ...func(*Query)) []Hit {
	e.t.Helper()
	src := e.sources()
	q := &Query{Limit: 50, Redact: src.Redact}
	if re, ok := strings.CutPrefix(query, "re:"); ok {
		var err error
		if q.Regex, err = CompileRegex(re); err != nil {
			e.t.Fatal(err)
		}
	} else {
		// Words, or "quoted phrases" among words, as a shell passes them.
		args := strings.Fields(query)
		if strings.Contains(query, `"`) {
			args = []string{query}
		}
		var err error
		if q.Terms, err = ParseTerms(args); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, m := range mod {
		m(q)
	}
	var res *Result
	err := With(context.Background(), Dir(e.home), src, func(ix *Index, _ UpdateStats) (err error) {
		res, err = ix.Search(context.Background(), q, src.Resolve)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Hits
}

// one checks that query finds exactly one hit and returns it.
func (e *env) one(query string, mod ...func(*Query)) Hit {
	e.t.Helper()
	hits := e.search(query, mod...)
	if len(hits) != 1 {
		e.t.Fatalf("%q: %d hits, want 1: %+v", query, len(hits), hits)
	}
	return hits[0]
}

// none checks that query finds nothing.
func (e *env) none(query string, mod ...func(*Query)) {
	e.t.Helper()
	if hits := e.search(query, mod...); len(hits) != 0 {
		e.t.Fatalf("%q: %d hits, want none: %+v", query, len(hits), hits[0])
	}
}

var recordTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// record is a transcript line of the given type and message content.
func record(typ, session, cwd string, content any, n int) string {
	msg := map[string]any{"role": typ, "content": content}
	r := map[string]any{"type": typ, "uuid": fmt.Sprintf("u-%s-%d", session[:4], n), "sessionId": session, "cwd": cwd,
		"timestamp": recordTime.Add(time.Duration(n) * time.Minute).Format(time.RFC3339Nano), "message": msg}
	b, _ := json.Marshal(r)
	return string(b) + "\n"
}

func toolUse(id, name string, input map[string]any) []any {
	return []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}
}

func toolResult(id string, content any) []any {
	return []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": content}}
}

func text(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }

// appendLines appends lines to a file, creating it and its folder.
func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		f.WriteString(l)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// lineCount is the number of lines of a file.
func lineCount(t *testing.T, path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// stubFor stores content and returns the stub that replaces it.
func (e *env) stubFor(content string) string {
	k, err := e.store.Put(context.Background(), []byte(content), ccm.Source{ToolName: "Bash"}, ccm.PinNone, "")
	if err != nil {
		e.t.Fatal(err)
	}
	return stub.Stub{Key: k, Source: "Bash make test", Bytes: int64(len(content)), Lines: strings.Count(content, "\n")}.String()
}

// generate writes a synthetic session of about size bytes.
func generate(t *testing.T, path string, seed int64, size int64, session, cwd string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Generate(f, synth.Options{Seed: seed, TargetBytes: size, SessionID: session, Cwd: cwd}); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func genTo(tb testing.TB, w io.Writer, seed, size int64) {
	if _, err := synth.Generate(w, synth.Options{Seed: seed, TargetBytes: size}); err != nil {
		tb.Fatal(err)
	}
}
