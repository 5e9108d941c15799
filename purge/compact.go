package purge

import (
	"fmt"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/rawjson"
	"ccm/transcript"
)

// injection is a compaction pair the plan writes in front of the kept tail.
type injection struct {
	before        int // record index of the first kept prompt
	boundaryUUID  string
	summaryUUID   string
	logicalParent string
	preTokens     int64
	text          string // filled by File from a pass over what precedes the tail
}

// planInjection finds where an injected compaction goes: in front of the
// --keep-turns Nth-last prompt. It does nothing when the tail already
// starts at a compaction (a second purge must not inject twice).
func (p *Plan) planInjection() {
	n := p.opt.KeepTurns
	t := -1
	for i := p.scan.ix.Len() - 1; i >= 0 && n > 0; i-- {
		if p.scan.info[i].prompt && p.drop[i] == keep {
			t = i
			n--
		}
	}
	if t <= 0 || n > 0 {
		p.Stats.InjectSkipped = "fewer prompts than --keep-turns"
		return
	}
	f := p.rec(t)
	for i := t; i < p.scan.ix.Len(); i++ {
		if p.rec(i).IsCompactBoundary() {
			p.Stats.InjectSkipped = "the kept turns already follow a compaction"
			return
		}
	}
	if j, ok := p.scan.ix.Lookup(f.Parent()); ok && p.rec(j).CompactSummary {
		p.Stats.InjectSkipped = "already compacted here"
		return
	}
	inj := &injection{before: t, logicalParent: f.Parent(),
		boundaryUUID: newUUID("ccm-compact-boundary", f.UUID()),
		summaryUUID:  newUUID("ccm-compact-summary", f.UUID())}
	for i := t - 1; i >= 0; i-- {
		if g := p.rec(i); g.Type == transcript.TypeAssistant && g.HasUsage && !g.APIError {
			inj.preTokens = g.Usage().Total()
			break
		}
	}
	s := inj.summaryUUID
	p.setParent(t, s, "continues from the injected compaction summary")
	p.inject = inj
	p.Stats.Injected = true
}

// injectedFacts are the facts of the pair, for the plan's structure check.
func (inj *injection) facts(sidechain bool) []transcript.Facts {
	boundary := transcript.Facts{Type: transcript.TypeSystem, HasUUID: true}
	boundary.SetTypeName("system")
	boundary.SetSubtype("compact_boundary")
	boundary.SetUUID(inj.boundaryUUID)
	boundary.SetLogicalParent(inj.logicalParent)
	summary := transcript.Facts{Type: transcript.TypeUser, HasUUID: true, CompactSummary: true, ContentString: true}
	summary.SetTypeName("user")
	summary.SetRole("user")
	summary.SetUUID(inj.summaryUUID)
	summary.SetParent(inj.boundaryUUID)
	return []transcript.Facts{boundary, summary}
}

// envelope copies the common envelope fields of a record, so records ccm
// writes look like their neighbours.
func envelope(b []byte, rec transcript.Record) []byte {
	for _, k := range []string{"cwd", "sessionId", "version", "gitBranch", "slug"} {
		if v := rec.Get(k); v.Type == gjson.String {
			b = append(b, ',')
			b = rawjson.Append(b, k)
			b = append(b, ':')
			b = rawjson.Append(b, v.Str)
		}
	}
	return b
}

// lines renders the boundary and summary records, in Claude Code's shape
// (docs/transcript-format.md, "The envelope"), with the envelope of the
// record they precede.
func (inj *injection) lines(next []byte) [][]byte {
	rec := transcript.NewRecord(next)
	ts := rec.Get("timestamp").Str
	b := []byte(`{"parentUuid":null,"logicalParentUuid":`)
	if inj.logicalParent == "" {
		b = append(b, "null"...)
	} else {
		b = rawjson.Append(b, inj.logicalParent)
	}
	b = append(b, `,"isSidechain":false,"userType":"external"`...)
	b = envelope(b, rec)
	b = append(b, `,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":`...)
	b = rawjson.Append(b, ts)
	b = append(b, `,"uuid":`...)
	b = rawjson.Append(b, inj.boundaryUUID)
	b = append(b, fmt.Sprintf(`,"level":"info","compactMetadata":{"trigger":"manual","preTokens":%d}}`, inj.preTokens)...)

	s := []byte(`{"parentUuid":`)
	s = rawjson.Append(s, inj.boundaryUUID)
	s = append(s, `,"isSidechain":false,"userType":"external"`...)
	s = envelope(s, rec)
	s = append(s, `,"type":"user","message":{"role":"user","content":`...)
	s = rawjson.Append(s, inj.text)
	s = append(s, `},"isVisibleInTranscriptOnly":true,"isCompactSummary":true,"uuid":`...)
	s = rawjson.Append(s, inj.summaryUUID)
	s = append(s, `,"timestamp":`...)
	s = rawjson.Append(s, ts)
	s = append(s, '}')
	return [][]byte{b, s}
}

// metadataTypes are the records Claude Code re-reads from the whole file
// (titles, tags, modes): when the region before the boundary is archived,
// the last copy of each is kept (docs/transcript-format.md, "The rules
// every ccm rewrite keeps").
var metadataTypes = map[string]bool{"custom-title": true, "ai-title": true, "last-prompt": true, "tag": true,
	"agent-name": true, "agent-color": true, "agent-setting": true, "mode": true, "permission-mode": true, "pr-link": true}

// archive is the region before the last compact boundary that
// --archive-compacted moves into the store.
type archive struct {
	boundary int   // record index of the boundary
	offset   int64 // the region is the file's bytes [0, offset)
	lines    int
	copies   map[int]bool // records of the region re-written after the stub
	key      ccm.Key
}

// planArchive marks everything before the last compact boundary for the
// archive, unless a record after it names a parent inside it (then the
// region is not self-contained and stays).
func (p *Plan) planArchive() {
	b := -1
	for i := p.scan.ix.Len() - 1; i >= 0; i-- {
		if f := p.rec(i); f.IsCompactBoundary() && !f.Sidechain {
			b = i
			break
		}
	}
	if b <= 0 {
		p.Stats.ArchiveSkipped = "no compact boundary with history before it"
		return
	}
	// A purged file holds the archive record and the metadata copies kept
	// after it: archiving them again would nest archives and change the
	// file on every purge.
	archived := true
	for i := 0; i < b && archived; i++ {
		t := p.rec(i).TypeName()
		archived = t == stub.ArchiveType || metadataTypes[t]
	}
	if archived {
		p.Stats.ArchiveSkipped = "already archived"
		return
	}
	ix := p.scan.ix
	for i := b; i < p.scan.ix.Len(); i++ {
		if j, ok := ix.Lookup(p.rec(i).Parent()); ok && j < b {
			p.Stats.ArchiveSkipped = fmt.Sprintf("line %d after the boundary names a parent before it", p.rec(i).Line)
			return
		}
	}
	a := &archive{boundary: b, offset: p.rec(b).Offset, lines: int(p.rec(b).Line - 1), copies: map[int]bool{}}
	last := map[string]int{}
	for i := range p.scan.ix.Len() {
		if metadataTypes[p.rec(i).TypeName()] {
			last[p.rec(i).TypeName()] = i
		}
	}
	for _, i := range last {
		if i < b {
			a.copies[i] = true
		}
	}
	for i := 0; i < b; i++ {
		p.setDrop(i, dropArchived)
	}
	p.archive = a
}

// archiveLine renders the record that stands for the archived region.
func (a *archive) line(st stub.Stub, next []byte) []byte {
	b := []byte(`{"type":"` + stub.ArchiveType + `","archive":`)
	b = rawjson.Append(b, st.String())
	b = append(b, fmt.Sprintf(`,"kept":%d`, len(a.copies))...)
	if ts := transcript.NewRecord(next).Get("timestamp"); ts.Type == gjson.String {
		b = append(b, `,"timestamp":`...)
		b = rawjson.Append(b, ts.Str)
	}
	return append(b, '}')
}
