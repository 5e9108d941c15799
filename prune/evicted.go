package prune

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"ccm/ccm"
	"ccm/internal/fsutil"
)

// evictedFile lists, one JSON object a line, the blobs that transcripts,
// backups or archives referenced and that prune --evict-referenced
// deleted, so that ccm restore can say why a stub stays a stub.
const evictedFile = "evicted.jsonl"

// Eviction is a referenced blob that prune deleted on request.
type Eviction struct {
	Key  ccm.Key   `json:"key"`
	At   time.Time `json:"at"`
	Rule string    `json:"rule"` // age or size
}

// logEvictions appends evictions to the store's eviction log and makes
// them durable.
func logEvictions(storeRoot string, evs []Eviction) error {
	if len(evs) == 0 {
		return nil
	}
	dir := RefsDir(storeRoot)
	if err := fsutil.MkdirPrivate(dir); err != nil {
		return err
	}
	f, err := fsutil.OpenFile(filepath.Join(dir, evictedFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, fsutil.FileMode)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, e := range evs {
		if err := enc.Encode(e); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Evictions reads the store's eviction log: the latest eviction of each
// key. A missing log has none; a line that cannot be read is skipped (the
// log only explains, it decides nothing).
func Evictions(storeRoot string) (map[ccm.Key]Eviction, error) {
	out := map[ccm.Key]Eviction{}
	f, err := fsutil.OpenRegular(filepath.Join(RefsDir(storeRoot), evictedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 64<<10)
	for sc.Scan() {
		var e Eviction
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if _, err := ccm.ParseKey(string(e.Key)); err != nil {
			continue
		}
		out[e.Key] = e
	}
	return out, sc.Err()
}
