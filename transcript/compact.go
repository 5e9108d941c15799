package transcript

import "ccm/internal/rawjson"

// The index keeps one Facts per record for the whole life of a command, so
// its size is what memory grows with on a long transcript (100k records in
// a 1 GB file). A Facts therefore holds no string and no slice of its own:
// its strings (uuids, parents, message ids, type names, tool ids) are
// numbers into one table per index whose bytes sit in large shared chunks,
// and its content blocks are a run in one flat slice of 16-byte entries.
// Repeating values cost nothing per record: type, subtype, role, block type
// and tool names are interned; a parentUuid reuses the bytes of the uuid
// of the record it names; consecutive lines of one response share their
// message id. The collector sees one pointer per record instead of a dozen
// strings and a slice.

// sref names one string of a strtab; 0 is "".
type sref uint32

// strtab holds the strings and content blocks of the records of one index.
// A table derived from another (Overlay) reads the strings, blocks and
// usage entries its base had when it was made through to the base, and
// adds its own after them.
type strtab struct {
	strs   []string // by sref; each a view into a chunk of arena
	arena  []byte   // the chunk being filled
	blocks []blockRec
	usage  []Usage
	names  map[string]sref // interned short values
	lastID string          // the message id added last, to share it
	lastRf sref

	base                 *strtab
	nstrs, nblks, nusage uint32 // the base's entries when derived
}

// arenaChunk is the size of the chunks strings are copied into; a string
// longer than a quarter of it gets an allocation of its own.
const arenaChunk = 64 << 10

// maxNames bounds the interned values: a file with unbounded variety in
// its type names stores each one like any other string.
const maxNames = 4096

func newStrtab() *strtab {
	return &strtab{strs: []string{""}, names: make(map[string]sref)}
}

// add copies s into the table and returns its number.
func (t *strtab) add(s string) sref {
	if s == "" {
		return 0
	}
	var kept string
	if len(s) > arenaChunk/4 {
		kept = clone(s)
	} else {
		if len(t.arena)+len(s) > cap(t.arena) {
			t.arena = make([]byte, 0, arenaChunk)
		}
		start := len(t.arena)
		t.arena = append(t.arena, s...)
		kept = rawjson.String(t.arena[start:len(t.arena):len(t.arena)])
	}
	t.strs = append(t.strs, kept)
	return sref(int(t.nstrs) + len(t.strs) - 1)
}

// name interns a short value that repeats from record to record.
func (t *strtab) name(s string) sref {
	if s == "" {
		return 0
	}
	if r, ok := t.names[s]; ok {
		return r
	}
	if t.base != nil {
		if r, ok := t.base.names[s]; ok && uint32(r) < t.nstrs {
			return r
		}
	}
	r := t.add(s)
	if len(t.names) < maxNames {
		t.names[t.str(r)] = r
	}
	return r
}

// str returns a string of the table.
func (t *strtab) str(r sref) string {
	if t == nil {
		return ""
	}
	if uint32(r) < t.nstrs {
		return t.base.str(r)
	}
	return t.strs[uint32(r)-t.nstrs]
}

// block returns block entry k of the table.
func (t *strtab) block(k uint32) blockRec {
	if k < t.nblks {
		return t.base.block(k)
	}
	return t.blocks[k-t.nblks]
}

// usageAt returns usage entry k of the table.
func (t *strtab) usageAt(k uint32) Usage {
	if k < t.nusage {
		return t.base.usageAt(k)
	}
	return t.usage[k-t.nusage]
}

// derive returns an empty table that reads t's present entries through.
func (t *strtab) derive() *strtab {
	return &strtab{strs: []string{}, names: make(map[string]sref), base: t,
		nstrs: t.nstrs + uint32(len(t.strs)), nblks: t.nblks + uint32(len(t.blocks)),
		nusage: t.nusage + uint32(len(t.usage))}
}

// Overlay holds what the Set methods add to facts copied from an index,
// so that the index itself does not grow: a rewrite's plan builds the
// structure it is about to write (NewIndex) several times over, each from
// copies of the original facts with other parents and blocks.
type Overlay struct{ t *strtab }

// Overlay returns a new overlay on the index's table.
func (ix *Index) Overlay() *Overlay {
	if ix.tab == nil {
		return &Overlay{newStrtab()}
	}
	return &Overlay{ix.tab.derive()}
}

// Adopt makes f's Set methods add to the overlay. f must be a copy of
// facts from the overlay's index (or facts built by hand, which have no
// table yet): what f holds stays readable.
func (o *Overlay) Adopt(f *Facts) {
	if f.tab == nil || f.tab == o.t.base {
		f.tab = o.t
		return
	}
	panic("transcript: Adopt of facts from another index")
}

// blockRec is the compact form of a BlockFacts.
type blockRec struct {
	typ          BlockType
	flags        uint8
	typeName, id sref
	name         sref
}

// Block flags.
const (
	bIsError uint8 = 1 << iota
	bEmpty
	bBlank
	bNoSignature
	bFakeSignature
	bInputNotObject
)

func flagIf(on bool, f uint8) uint8 {
	if on {
		return f
	}
	return 0
}

func (t *strtab) blockRec(b *BlockFacts) blockRec {
	return blockRec{typ: b.Type, typeName: t.name(b.TypeName), id: t.add(b.ID), name: t.name(b.Name),
		flags: flagIf(b.IsError, bIsError) | flagIf(b.Empty, bEmpty) | flagIf(b.Blank, bBlank) |
			flagIf(b.NoSignature, bNoSignature) | flagIf(b.FakeSignature, bFakeSignature) |
			flagIf(b.InputNotObject, bInputNotObject)}
}

func (t *strtab) blockFacts(r blockRec) BlockFacts {
	return BlockFacts{Type: r.typ, TypeName: t.str(r.typeName), ID: t.str(r.id), Name: t.str(r.name),
		IsError: r.flags&bIsError != 0, Empty: r.flags&bEmpty != 0, Blank: r.flags&bBlank != 0,
		NoSignature: r.flags&bNoSignature != 0, FakeSignature: r.flags&bFakeSignature != 0,
		InputNotObject: r.flags&bInputNotObject != 0}
}

// Facts is what the index keeps of one record: 96 bytes plus its
// share of the index's string table and block list (see the top of this
// file). The string fields and the blocks are read through methods; a
// Facts made by hand (a record a rewrite is about to write) gets them with
// the Set methods.
type Facts struct {
	Offset int64
	// TextBytes is the size, escaped as in the line, of the text this
	// record sends to the model (text, thinking, tool_use names and
	// inputs, tool_result text), and Images counts its image blocks, top
	// level and inside tool results: a context estimate scales a sample by
	// them without reading the line again.
	TextBytes int64
	// ThinkingBytes is the part of TextBytes in thinking blocks: the API
	// drops earlier turns' thinking from the context, so a report of what
	// a purge saves in context leaves it out.
	ThinkingBytes int64

	tab    *strtab
	Line   int32
	Size   int32 // bytes including the line terminator
	Images int32

	usage                                                       uint32 // 1 + its place in tab.usage, or 0
	blk, nblk                                                   uint32 // the record's run of tab.blocks
	uuid, parent, logicalParent, msgID, typeName, subtype, role sref

	Type    RecType
	HasUUID bool // the record carries a uuid field

	Sidechain, Meta, CompactSummary, APIError bool
	// ContentString is true when message.content is a string.
	ContentString bool
	// ContentEmpty is true for content "", [] or missing.
	ContentEmpty bool
	// HasUsage is true when the record reports a message.usage (Usage).
	HasUsage bool
}

// Usage is the token usage an assistant record reports (HasUsage); only
// those records have an entry in the table.
func (f *Facts) Usage() Usage {
	if f.usage == 0 {
		return Usage{}
	}
	return f.tab.usageAt(f.usage - 1)
}

// UUID is the record's uuid ("" when it has none).
func (f *Facts) UUID() string { return f.tab.str(f.uuid) }

// Parent is the record's parentUuid ("" for null or absent).
func (f *Facts) Parent() string { return f.tab.str(f.parent) }

// LogicalParent is a compact boundary's logicalParentUuid.
func (f *Facts) LogicalParent() string { return f.tab.str(f.logicalParent) }

// MsgID is an assistant record's message.id.
func (f *Facts) MsgID() string { return f.tab.str(f.msgID) }

// TypeName is the record's "type" as written.
func (f *Facts) TypeName() string { return f.tab.str(f.typeName) }

// Subtype is a system record's subtype, attachment.type, or progress
// data.type.
func (f *Facts) Subtype() string { return f.tab.str(f.subtype) }

// Role is message.role.
func (f *Facts) Role() string { return f.tab.str(f.role) }

// NumBlocks is the number of content blocks (0 for string content).
func (f *Facts) NumBlocks() int { return int(f.nblk) }

// Block returns the facts of content block b.
func (f *Facts) Block(b int) BlockFacts {
	if b < 0 || b >= int(f.nblk) {
		panic("transcript: block index out of range")
	}
	return f.tab.blockFacts(f.tab.block(f.blk + uint32(b)))
}

// Blocks returns the facts of every content block, in a new slice.
func (f *Facts) Blocks() []BlockFacts {
	if f.nblk == 0 {
		return nil
	}
	out := make([]BlockFacts, f.nblk)
	for b := range out {
		out[b] = f.tab.blockFacts(f.tab.block(f.blk + uint32(b)))
	}
	return out
}

// table returns the record's string table, making one for a Facts built
// by hand.
func (f *Facts) table() *strtab {
	if f.tab == nil {
		f.tab = newStrtab()
	}
	return f.tab
}

// The Set methods change a string or the blocks of a Facts. A Facts
// copied from an index shares that index's table and appends to it: they
// are meant for a rewrite's plan, not for use while another goroutine
// reads the index.

// SetUUID sets the uuid.
func (f *Facts) SetUUID(s string) { f.uuid = f.table().add(s) }

// SetParent sets the parentUuid; setting the one it has adds nothing to
// the table.
func (f *Facts) SetParent(s string) {
	if s != f.Parent() {
		f.parent = f.table().add(s)
	}
}

// SetLogicalParent sets a compact boundary's logicalParentUuid.
func (f *Facts) SetLogicalParent(s string) { f.logicalParent = f.table().add(s) }

// SetSubtype sets the subtype.
func (f *Facts) SetSubtype(s string) { f.subtype = f.table().name(s) }

// SetTypeName sets the type as written (Type is set apart).
func (f *Facts) SetTypeName(s string) { f.typeName = f.table().name(s) }

// SetRole sets message.role.
func (f *Facts) SetRole(s string) { f.role = f.table().name(s) }

// SetBlocks replaces the content blocks.
func (f *Facts) SetBlocks(bs []BlockFacts) {
	t := f.table()
	f.blk, f.nblk = t.nblks+uint32(len(t.blocks)), uint32(len(bs))
	for i := range bs {
		t.blocks = append(t.blocks, t.blockRec(&bs[i]))
	}
}

// keep turns what a walk found in one line into the Facts the index
// keeps, copying its strings into the table; a parent the index already
// holds is shared with that record's uuid.
func (t *strtab) keep(lf *lineFacts, ix *Index) Facts {
	f := Facts{Offset: lf.Offset, TextBytes: lf.TextBytes, ThinkingBytes: lf.ThinkingBytes,
		tab: t, Line: int32(lf.Line), Size: int32(lf.Size), Images: int32(lf.Images),
		Type: lf.Type, HasUUID: lf.HasUUID, Sidechain: lf.Sidechain, Meta: lf.Meta,
		CompactSummary: lf.CompactSummary, APIError: lf.APIError, ContentString: lf.ContentString,
		ContentEmpty: lf.ContentEmpty, HasUsage: lf.HasUsage}
	f.typeName, f.subtype, f.role = t.name(lf.TypeName), t.name(lf.Subtype), t.name(lf.Role)
	if lf.UUID != "" {
		f.uuid = t.add(lf.UUID)
	}
	if lf.Parent != "" {
		if j, ok := ix.Lookup(lf.Parent); ok {
			f.parent = ix.Rec(j).uuid // the bytes of the uuid it names
		} else {
			f.parent = t.add(lf.Parent)
		}
	}
	f.logicalParent = t.add(lf.LogicalParent)
	if lf.MsgID != "" {
		if lf.MsgID == t.lastID {
			f.msgID = t.lastRf // the next line of the same response
		} else {
			f.msgID = t.add(lf.MsgID)
			t.lastID, t.lastRf = t.str(f.msgID), f.msgID
		}
	}
	if lf.HasUsage {
		t.usage = append(t.usage, lf.Usage)
		f.usage = uint32(len(t.usage))
	}
	if len(lf.Blocks) > 0 {
		f.blk, f.nblk = uint32(len(t.blocks)), uint32(len(lf.Blocks))
		for i := range lf.Blocks {
			t.blocks = append(t.blocks, t.blockRec(&lf.Blocks[i]))
		}
	}
	return f
}
