package transcript

import (
	"errors"
	"fmt"
)

// BadLine is a line that is not a record: blank, invalid, torn or NUL.
type BadLine struct {
	Line   int
	Offset int64
	Kind   Kind
	// NotObject is set for valid JSON that is not an object (an array, a
	// string, a number), which is reported as such.
	NotObject bool
}

// maxBadLines bounds how many bad lines an index lists one by one (all
// are counted), so a file of garbage cannot grow the index without limit.
const maxBadLines = 1000

// Index holds the facts of every record of one transcript, in file order,
// plus counts of the lines that are not records. It is built in one
// streaming pass; its size grows with the number of records, never with
// the size of their content.
type Index struct {
	// The records' facts, in chunks of recChunk: Rec(i), Len(). One
	// growing slice would copy itself as it grows, holding the old and
	// the new array at once, and keep up to a quarter of it unused.
	recs  [][]Facts
	nrecs int
	Lines int   // all lines
	Bytes int64 // all bytes
	// Counts of non-record lines by kind, and the first maxBadLines of them.
	Blank, Invalid, Torn, NULs int
	Bad                        []BadLine
	// Terminated is false when the file's last line has no newline.
	Terminated bool

	uuids uuidTable // the first record of each uuid
	tab   *strtab   // the strings and blocks of the records Build kept
	// Dups are indexes of records whose uuid an earlier record already
	// carries (saved_hook_context records, which reuse one uuid by design,
	// are not counted).
	Dups []int
}

// Visitor is called for every line while an index is built. rec and f are
// set for object lines (f is the record's entry in the index and may be
// kept only as an index); sz is filled when the builder was asked for sizes.
type Visitor func(l Line, rec Record, f *Facts, sz *Sizes) error

// BuildOptions configure Build.
type BuildOptions struct {
	// Sizes asks for the byte accounting of every record (analyze).
	Sizes bool
	// Visit, when set, sees every line as it is read.
	Visit Visitor
}

// ErrNotTranscript is returned for input that holds no record: no JSON
// object line at all but other content (binary garbage, a JSON array
// file, …), or JSON objects none of which has a "type".
var ErrNotTranscript = errors.New("not a transcript")

// The two ways a file is not a transcript; both are ErrNotTranscript.
// They are static values, not fmt.Errorf calls: package initialisation
// runs in every `ccm hook` process, and fmt's first use costs page faults.
var (
	ErrNoObjects error = &reasonError{"not a transcript: no line is a JSON object", ErrNotTranscript}
	ErrUntyped   error = &reasonError{"not a transcript: its JSON objects have no \"type\" field, which every Claude Code record has", ErrNotTranscript}
)

// reasonError is a sentinel error that wraps a more general one.
type reasonError struct {
	msg string
	err error
}

func (e *reasonError) Error() string { return e.msg }
func (e *reasonError) Unwrap() error { return e.err }

// checkTranscript says whether what was indexed is a transcript at all:
// some line must be a JSON object, and some object must name its type.
func (ix *Index) checkTranscript() error {
	if ix.Len() == 0 && ix.Invalid+ix.Torn+ix.NULs > 0 {
		for _, b := range ix.Bad {
			if b.Kind != Blank {
				return noObjects(b.Line, b.Kind, b.NotObject)
			}
		}
		return ErrNoObjects
	}
	if ix.Len() > 0 && !ix.anyTyped() {
		// JSON objects, but none is a record: every line Claude Code
		// writes names its type. Purging or checking such a file (a log,
		// a data set) would only report "nothing to do".
		return ErrUntyped
	}
	return nil
}

// noObjects is ErrNoObjects naming the first line that is not blank: the
// refusal of every command given a file that is not a transcript.
func noObjects(line int, kind Kind, notObject bool) error {
	what := "is not JSON"
	switch {
	case notObject:
		what = "is JSON but not an object"
	case kind == NUL:
		what = "is NUL bytes"
	case kind == Torn:
		what = "is cut off"
	}
	return fmt.Errorf("%w (line %d %s)", ErrNoObjects, line, what)
}

// anyTyped reports whether a record names its type.
func (ix *Index) anyTyped() bool {
	for i := range ix.Len() {
		if ix.Rec(i).typeName != 0 {
			return true
		}
	}
	return false
}

// recChunk is the number of records of one chunk of Index.recs (384 KB).
const recChunk = 4096

// Len is the number of records.
func (ix *Index) Len() int { return ix.nrecs }

// Rec returns the facts of record i, in file order (0 ≤ i < Len()). The
// pointer stays valid, and the facts in place, for the life of the index.
func (ix *Index) Rec(i int) *Facts {
	if uint(i) >= uint(ix.nrecs) {
		panic("transcript: record index out of range")
	}
	return &ix.recs[i/recChunk][i%recChunk]
}

// push appends the facts of one more record.
func (ix *Index) push(f Facts) {
	if ix.nrecs%recChunk == 0 {
		// The first chunk grows as a slice does, so that a small file
		// (a hook reading a short session) does not pay for a whole one.
		n := recChunk
		if ix.nrecs == 0 {
			n = 16
		}
		ix.recs = append(ix.recs, make([]Facts, 0, n))
	}
	c := &ix.recs[len(ix.recs)-1]
	*c = append(*c, f)
	ix.nrecs++
}

func (ix *Index) addBad(l Line) {
	switch l.Kind {
	case Blank:
		ix.Blank++
	case Invalid:
		ix.Invalid++
	case Torn:
		ix.Torn++
	case NUL:
		ix.NULs++
	}
	if len(ix.Bad) < maxBadLines {
		b := BadLine{Line: l.Num, Offset: l.Offset, Kind: l.Kind}
		if l.Kind == Invalid {
			body := l.Body()
			b.NotObject = ValidJSON(body)
		}
		ix.Bad = append(ix.Bad, b)
	}
}

func (ix *Index) addUUID(i int) {
	f := ix.Rec(i)
	u := f.UUID()
	if u == "" {
		return
	}
	if _, dup := ix.Lookup(u); dup {
		if f.Subtype() != "saved_hook_context" && f.TypeName() != "saved_hook_context" {
			ix.Dups = append(ix.Dups, i)
		}
		return
	}
	ix.uuids.insert(i, u, ix.uuidOf)
}

// uuidOf is record j's uuid, for the uuid table.
func (ix *Index) uuidOf(j int) string { return ix.Rec(j).UUID() }

// Lookup returns the index of the first record with this uuid.
func (ix *Index) Lookup(uuid string) (int, bool) {
	if uuid == "" {
		return 0, false
	}
	return ix.uuids.find(uuid, ix.uuidOf)
}

// ParentOf returns the index of a record's parent, or -1 when its
// parentUuid is null, absent or names no record in the file.
func (ix *Index) ParentOf(i int) int {
	p := ix.Rec(i).Parent()
	if p == "" {
		return -1
	}
	j, ok := ix.Lookup(p)
	if !ok {
		return -1
	}
	return j
}

// Dangling lists the records whose parentUuid names a record that is not
// in the file.
func (ix *Index) Dangling() []int {
	var out []int
	for i := range ix.Len() {
		p := ix.Rec(i).Parent()
		if p == "" {
			continue
		}
		if _, ok := ix.Lookup(p); !ok {
			out = append(out, i)
		}
	}
	return out
}

// IsConversation reports whether a record is a user or assistant message.
func (f *Facts) IsConversation() bool { return f.Type == TypeUser || f.Type == TypeAssistant }

// IsCompactBoundary reports a system compact_boundary record.
func (f *Facts) IsCompactBoundary() bool {
	return f.Type == TypeSystem && f.Subtype() == "compact_boundary"
}

// NewIndex builds an index over records a caller prepared, such as the
// structure a rewrite is about to produce, so that the same chain walk and
// API rules can be run on it before a byte is written.
func NewIndex(recs []Facts) *Index {
	ix := &Index{Terminated: true}
	for i := range recs {
		ix.push(recs[i])
		ix.addUUID(i)
	}
	return ix
}
