package migrate

import (
	"github.com/tidwall/gjson"
)

// Undo puts back every file the migration of manifest changed, byte for
// byte with its mode, and removes the files (and empty folders) it
// created. A file changed again since is left as it is and reported; a
// file already put back (an undo cut short) is left. The manifest is then
// renamed manifest.undone.json, so a second undo finds the migration
// before. A migration that was itself cut short is put back whole (see
// journal). The caller holds Lock.
func Undo(manifest string, dryRun bool) (*UndoResult, error) {
	j, err := loadJournal(manifest)
	if err != nil {
		return nil, err
	}
	return j.putBack(dryRun)
}

func gjsonArray(data []byte, path string) []gjson.Result {
	return gjson.GetBytes(data, path).Array()
}
