package search

import "strings"

// Source kinds of an indexed file.
const (
	srcLive    = 'L' // a transcript in the config dir, read in place
	srcArchive = 'A' // an archived session, read from its index part
)

// fileEntry is one indexed file: a live transcript (main or subagent), or
// an archived session's index part.
type fileEntry struct {
	No      uint32 // the documents' File; a rewritten file gets a new one
	Src     byte
	Path    string // the transcript, or the archive
	Part    string // srcArchive: the index part, relative to the index dir
	Session string
	Agent   string // subagent id, "" for a main transcript
	Folder  string
	Project string // the real path, from the records' cwd
	Size    int64  // size when last seen (the archive's for srcArchive)
	MTime   int64  // ns
	Dev     uint64
	Ino     uint64
	Offset  int64  // bytes indexed: the end of the last whole line
	Lines   uint32 // lines indexed
	FP      uint32 // checksum of the bytes before Offset (see fingerprint)
	Last    int64  // newest record time, Unix seconds
	Pending []string

	seen uint32 // the number of the last update that listed it (not saved)
}

// key is the entry's key in the catalog.
func (f *fileEntry) key() string { return string(f.Src) + f.Path }

// segEntry is one segment of the index.
type segEntry struct {
	ID   int
	Size int64
	Docs int
	Text int64
	Full bool // written because its builder was full: never merged
}

// catalog is the index's table of contents: what is indexed, up to where,
// and in which segments. It is a base file rewritten now and then, and a
// journal of the updates since (catalog.log): an update that changed a few
// files appends their entries instead of rewriting thousands.
type catalog struct {
	Version int
	Gen     int    // the base's generation; journal records name theirs
	Redact  string // a hash of the redaction patterns the text was indexed with
	NextNo  uint32
	NextSeg int
	Segs    []segEntry
	Tools   []string // tool names; a document's Tool is 1 + an index here
	Files   map[string]*fileEntry

	toolIDs  map[string]uint16
	byNo     map[uint32]*fileEntry
	dirty    map[string]bool // keys put or deleted since the last save
	newTools int             // tools added since the last save
	logSize  int64           // bytes of journal in force
}

const (
	catalogVersion = 2
	catalogMagic   = "ccm-search-catalog"
	// The journal is folded into a new base once it passes this size, or
	// a quarter of the base.
	maxJournal = 1 << 20
)

func newCatalog() *catalog {
	c := &catalog{Version: catalogVersion, NextNo: 1, Files: map[string]*fileEntry{}}
	c.reindex()
	return c
}

func (c *catalog) reindex() {
	c.toolIDs = map[string]uint16{}
	for i, t := range c.Tools {
		c.toolIDs[t] = uint16(i + 1)
	}
	c.byNo = map[uint32]*fileEntry{}
	for _, f := range c.Files {
		c.byNo[f.No] = f
	}
	c.dirty = map[string]bool{}
}

// put adds or replaces an entry.
func (c *catalog) put(e *fileEntry) {
	k := e.key()
	if old := c.Files[k]; old != nil && old.No != e.No {
		delete(c.byNo, old.No)
	}
	c.Files[k] = e
	c.byNo[e.No] = e
	c.dirty[k] = true
}

// del removes an entry.
func (c *catalog) del(k string) {
	if old := c.Files[k]; old != nil {
		delete(c.byNo, old.No)
		delete(c.Files, k)
		c.dirty[k] = true
	}
}

// tool returns the number of a tool name, adding it; 0 for none or when
// the table is full.
func (c *catalog) tool(name string) uint16 {
	if name == "" {
		return 0
	}
	if id, ok := c.toolIDs[name]; ok {
		return id
	}
	if len(c.Tools) >= 65535 {
		return 0
	}
	name = strings.Clone(name) // it may point into a buffer that is reused
	c.Tools = append(c.Tools, name)
	id := uint16(len(c.Tools))
	c.toolIDs[name] = id
	c.newTools++
	return id
}

func (c *catalog) toolName(id uint16) string {
	if id == 0 || int(id) > len(c.Tools) {
		return ""
	}
	return c.Tools[id-1]
}
