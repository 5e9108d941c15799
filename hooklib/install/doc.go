// Package install registers ccm's hooks in a Claude Code settings.json and
// installs its slash commands, and undoes both.
//
// settings.json belongs to the user: it is edited in place at the byte
// level (gjson to read, sjson to update a value, a splice for new items),
// never decoded and re-encoded, so every key, comment-free formatting
// choice and user hook ccm does not own keeps its bytes. Install is
// idempotent and backs the file up before changing it; uninstall removes
// exactly what install added, so install followed by uninstall gives the
// original file back byte for byte.
package install
