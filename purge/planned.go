package purge

import (
	"hash/crc32"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/rawjson"
)

// plannedStub is one value the plan moves to the store: its span in its
// record's line, the key of its bytes, and what its stub says. The write
// pass only splices the stub in and hands the bytes of the span to the
// store under that key. It holds what the stub and the stored value's
// metadata are made of, not the stub's text: a 1 GB transcript plans
// 20,000 stubs, and the plan must stay small.
type plannedStub struct {
	off, n    int     // the raw value's span in the line's body
	key       ccm.Key // of the raw value, as it is in the line (JSON-encoded)
	info      toolInfo
	desc      string // the stub's desc line
	media     string // an image's media type; "" for text
	lines     int    // escaped newlines in the value
	exit      int    // the exit code a Bash output states (0 when none)
	pin       ccm.PinLevel
	pinReason string
	asBlock   bool   // an image: the stub goes in a text block in its place
	where     string // the value's path in the record, for the printed plan
	why       string // the rule that moves it
}

// stub is the stub that replaces the value.
func (ps *plannedStub) stub() stub.Stub {
	st := stub.Stub{Key: ps.key, Source: ps.info.source(), Desc: ps.desc, Bytes: int64(ps.n), Lines: ps.lines, Exit: ps.exit, Pinned: ps.pin}
	if ps.media != "" {
		st.Source = "Image (" + mediaName(ps.media) + ")"
	}
	return st
}

// text is the stub as written in the value's place: a JSON string, or a
// text block holding it for an image.
func (ps *plannedStub) text() []byte {
	st := ps.stub()
	if !ps.asBlock {
		return rawjson.Append(nil, st.String())
	}
	b := append([]byte(nil), `{"type":"text","text":`...)
	return append(rawjson.Append(b, st.String()), '}')
}

// source is what the store records of where the value came from. Type
// "json" marks a raw JSON value cut out by purge: ccm restore splices
// only such blobs back (a hook's stub holds plain text).
func (ps *plannedStub) source(session string) ccm.Source {
	if ps.media != "" {
		return ccm.Source{Type: stub.RawValueType, MediaType: ps.media, SessionPath: session}
	}
	i := ps.info
	return ccm.Source{Type: stub.RawValueType, ToolName: i.Name, SessionPath: session, FilePath: i.FilePath, Command: i.Command, Description: i.Desc, ExitCode: ps.exit}
}

// stubbedRecord is a record with planned stubs.
type stubbedRecord struct {
	// sum is the CRC-32C of the line's body when the plan read it. The
	// write pass checks it before splicing: a stub must never stand for
	// bytes other than those its key names.
	sum   uint32
	stubs []plannedStub
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// lineSum is the checksum the plan keeps of a line it decided stubs in.
func lineSum(body []byte) uint32 { return crc32.Checksum(body, castagnoli) }

// done returns the record's plan, or nil when it has no stub.
func (sr *stubbedRecord) done(line []byte) *stubbedRecord {
	if len(sr.stubs) == 0 {
		return nil
	}
	sr.sum = lineSum(line)
	return sr
}
