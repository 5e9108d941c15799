package sessions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Sessions written at the same moment are listed in one order, by project
// folder and then id, whichever folder's listing finishes first.
func TestRowsOrderOfEqualTimes(t *testing.T) {
	c := newCfg(t)
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	var want []string
	for _, p := range []string{"-a", "-b", "-c", "-d"} {
		for i := range 3 {
			id := fmt.Sprintf("%08d-1111-4111-8111-111111111111", i)
			path := filepath.Join(c.projects, p, id+".jsonl")
			write(t, path, 100)
			if err := os.Chtimes(path, at, at); err != nil {
				t.Fatal(err)
			}
			want = append(want, p+"/"+id[:8])
		}
	}
	for run := range 20 {
		s := sel(t, c.cfg, Selector{All: true}, SelectOptions{Sessions: true, Jobs: 4})
		rows, errs := Rows(context.Background(), c.cfg, s, Options{Jobs: 4, NoPeek: true})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		var got []string
		for _, r := range rows {
			if r.Session.Folder == "-plain" || r.Session.Folder == "-linked" {
				continue
			}
			got = append(got, r.Session.Folder+"/"+r.Session.ID[:8])
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("run %d: rows in order %v, want %v", run, got, want)
		}
	}
}
