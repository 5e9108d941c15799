package purge

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/rawjson"
	"ccm/transcript"
)

// decideStubs is the part of the first pass that reads content: for every
// record before the recent window that holds large content, it decides
// each value that moves to the store, with its span, its key and its stub.
// It also reads the tool calls before them, whose name, file, command or
// description the stubs of their results carry. Only those records are
// read, each at its offset: one goroutine reads them in file order and
// notes the tool calls; workers on every core walk and hash the large
// ones. The lines in flight are bounded like the store's (maxInFlight).
func (p *Plan) decideStubs(ctx context.Context, src io.ReaderAt) error {
	p.stubs = map[int]*stubbedRecord{}
	if p.opt.NoStore || p.opt.RepairOnly {
		return nil
	}
	var (
		mu   sync.Mutex // guards p.stubs
		bud  = newBudget()
		jobs = make(chan decideJob, 4)
		wg   sync.WaitGroup
	)
	for n := runtime.GOMAXPROCS(0); n > 0; n-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := &decider{p: p}
			for j := range jobs {
				d.tools = j.tools
				sr := d.record(j.body, j.rec)
				n := int64(cap(j.buf))
				putContent(j.buf)
				if sr != nil {
					mu.Lock()
					p.stubs[j.rec] = sr
					mu.Unlock()
				}
				bud.give(n)
			}
		}()
	}
	err := p.readForStubs(ctx, src, jobs, func(n int64) { bud.take(n) })
	close(jobs)
	wg.Wait()
	for _, sr := range p.stubs {
		for _, ps := range sr.stubs {
			p.Stats.Stubs++
			p.Stats.StubbedBytes += int64(ps.n)
		}
	}
	return err
}

// decideJob is a large record handed to a worker, with the tool calls its
// results answer.
type decideJob struct {
	rec   int
	buf   []byte // from getContent, recycled once decided
	body  []byte // the line in buf, without its terminator
	tools map[string]toolInfo
}

// readForStubs reads, in file order, the records decideStubs needs: it
// notes tool calls, and sends each record to stub to jobs. reserve waits
// until n more bytes may be in flight.
func (p *Plan) readForStubs(ctx context.Context, src io.ReaderAt, jobs chan<- decideJob, reserve func(n int64)) error {
	tools := map[string]toolInfo{}
	var buf []byte
	for rec := 0; rec < p.windowStart && rec < p.scan.ix.Len(); rec++ {
		if rec%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		f := p.rec(rec)
		if p.drop[rec] != keep {
			continue
		}
		calls := f.Type == transcript.TypeAssistant && hasToolUse(f)
		stubbing := p.stubbing(rec)
		if !calls && !stubbing {
			continue
		}
		if !stubbing {
			body, err := readBody(src, f, &buf)
			if err != nil {
				return err
			}
			noteTools(tools, body)
			continue
		}
		b := getContent(int(f.Size))
		reserve(int64(cap(b)))
		body, err := readBody(src, f, &b)
		if err != nil {
			return err
		}
		if calls {
			noteTools(tools, body)
		}
		jobs <- decideJob{rec: rec, buf: b, body: body, tools: p.answered(rec, tools)}
	}
	return nil
}

// answered returns the tool calls a record's results answer, by the id
// each result will carry (a renamed duplicate's new id).
func (p *Plan) answered(rec int, tools map[string]toolInfo) map[string]toolInfo {
	out := map[string]toolInfo{}
	rn := p.renames[rec]
	f := p.rec(rec)
	for k := 0; k < f.NumBlocks(); k++ {
		bf := f.Block(k)
		if bf.Type != transcript.BlockToolResult {
			continue
		}
		id := bf.ID
		if nid, ok := rn[k]; ok {
			id = nid
		}
		if t, ok := tools[id]; ok {
			out[id] = t
		}
	}
	return out
}

// readBody reads a record's line at its offset, without its terminator.
func readBody(src io.ReaderAt, f *transcript.Facts, buf *[]byte) ([]byte, error) {
	n := int(f.Size)
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := src.ReadAt(b, f.Offset); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("line %d: the file changed between the two passes", f.Line)
		}
		return nil, err
	}
	return transcript.Line{Raw: b}.Body(), nil
}

// hasToolUse reports whether a record holds a tool call.
func hasToolUse(f *transcript.Facts) bool {
	for b := 0; b < f.NumBlocks(); b++ {
		if f.Block(b).Type == transcript.BlockToolUse {
			return true
		}
	}
	return false
}

// noteTools remembers the tool calls of an assistant line, so the stubs of
// their results can name the tool and its file, command or pattern.
func noteTools(tools map[string]toolInfo, body []byte) {
	transcript.NewRecord(body).Blocks(func(_ int, blk transcript.Block) bool {
		if blk.Get("type").Str == "tool_use" {
			tools[blk.ID()] = toolInfoOf(blk.Result)
		}
		return true
	})
}

// blockKeys are the fields of a content block decideStubs reads.
var blockKeys = [4]string{"type", "tool_use_id", "content", "is_error"}

// stubbing reports whether large content of this record moves to the store.
func (p *Plan) stubbing(rec int) bool {
	o := p.opt
	f := p.rec(rec)
	return !o.NoStore && !o.RepairOnly && rec < p.windowStart && p.scan.info[rec].large && !f.CompactSummary
}

// decider decides the stubs of one purge.
type decider struct {
	p     *Plan
	tools map[string]toolInfo
	strs  map[string]string // intern's strings
}

// record finds the large values of one line and plans a stub for each,
// keyed by the value exactly as it is in the line (still JSON-encoded, so
// ccm restore is a byte splice). It returns nil when none is large.
func (d *decider) record(line []byte, rec int) *stubbedRecord {
	p := d.p
	o := p.opt
	thr := p.thresholdFor(rec)
	s := rawjson.String(line)
	f := p.rec(rec)
	level, reason := p.pinFor(rec)
	rm := p.remove[rec]
	rn := p.renames[rec]
	sr := &stubbedRecord{}
	var firstResult toolInfo
	var firstFound bool
	stubValue := func(v gjson.Result, where string, info toolInfo, desc, why string, asBlock bool, media string) {
		if isStub(v) {
			// Already a stub (a purged file purged again with a threshold
			// below a stub's size): stubbing it again would break
			// idempotence and nest stubs.
			return
		}
		raw := line[v.Index : v.Index+len(v.Raw)]
		if desc == "" {
			// The Bash description (or Task's) is the stub's desc line, as
			// in claude-context-manager's version 2 stubs.
			desc = info.Desc
		}
		ps := plannedStub{off: v.Index, n: len(v.Raw), key: ccm.KeyOf(raw), info: info, desc: desc,
			pin: level, pinReason: reason, asBlock: asBlock, where: d.intern(where), why: d.intern(why)}
		if media != "" {
			ps.media = d.intern(media) // media points into the line buffer: intern copies it
		} else {
			ps.lines = stub.ValueLines(raw)
			ps.exit = exitCode(raw)
		}
		sr.stubs = append(sr.stubs, ps)
	}
	overThreshold := func(what string) string {
		if rec < p.windowStart && o.OldThreshold > 0 && thr < o.Threshold {
			return fmt.Sprintf("%s over --old-threshold %d, before the recent window", what, thr)
		}
		return fmt.Sprintf("%s over --threshold %d", what, thr)
	}
	// One walk over the record's members finds both the message and the
	// toolUseResult, which comes after it: looking each up from the start
	// crossed the message, megabytes of output, twice. transcript's walks,
	// not gjson.Get, for values that may be large: they find them without
	// decoding them.
	var content, tur, att, rendered gjson.Result
	var msgSeen, turSeen bool // the first of a duplicated key, as gjson reads it
	transcript.ForEachMember(gjson.Result{Type: gjson.JSON, Raw: s}, func(k string, v gjson.Result) bool {
		switch {
		case k == "message" && !msgSeen:
			content, msgSeen = lookupIn(v, "content"), true
		case k == "toolUseResult" && !turSeen:
			tur, turSeen = v, true
		case k == "attachment" && !att.Exists():
			att = v
		case k == "rendered" && !rendered.Exists():
			rendered = v
		}
		return true
	})
	if why, ok := p.microHooks[rec]; ok {
		stubHook(f, content, att, rendered, func(v gjson.Result) {
			stubValue(v, "hook context", toolInfo{Name: "hook context"}, why, why, false, "")
		})
		return sr.done(line)
	}
	if content.IsArray() {
		k := -1
		transcript.ForEachElement(content, func(blk gjson.Result) bool {
			k++
			if rm != nil && k < len(rm) && rm[k] {
				return true // the block goes: nothing of it is stored
			}
			at := "message.content[" + strconv.Itoa(k) + "]"
			// One walk finds the block's fields: is_error comes after a
			// result's content, and gjson's Get decoded megabytes of it on
			// the way (a third of this pass's CPU).
			var fv [4]gjson.Result
			transcript.Members(blk.Raw, blockKeys[:], fv[:])
			switch gjson.Parse(fv[0].Raw).Str {
			case "tool_result":
				id := gjson.Parse(fv[1].Raw).Str
				if nid, ok := rn[k]; ok {
					id = nid // renamed duplicate id: the write pass splices it in
				}
				info := d.tools[id]
				if !firstFound {
					firstResult, firstFound = info, true
				}
				inner := fv[2]
				if inner.Exists() {
					inner.Index += blk.Index
				}
				isError := fv[3].Raw == "true"
				if why, ok := microFor(p.microResults, rec, id); ok && len(inner.Raw) >= microMin {
					stubValue(inner, at+".content", info, why, why, false, "")
				} else if len(inner.Raw) > thr && !lostResult(isError, len(inner.Raw)) {
					stubValue(inner, at+".content", info, "", overThreshold("tool result"), false, "")
				} else if inner.IsArray() {
					j := -1
					transcript.ForEachElement(inner, func(ib gjson.Result) bool {
						j++
						if ib.Get("type").Str == "image" && len(ib.Raw) > o.ImageMin {
							stubValue(ib, at+".content["+strconv.Itoa(j)+"]", info, "", fmt.Sprintf("image over --image-min %d", o.ImageMin), true, ib.Get("source.media_type").Str)
						}
						return true
					})
				}
			case "image":
				if len(blk.Raw) > o.ImageMin {
					stubValue(blk, at, toolInfo{}, "", fmt.Sprintf("image over --image-min %d", o.ImageMin), true, blk.Get("source.media_type").Str)
				}
			case "tool_use":
				name := blk.Get("name").Str
				if why, ok := microFor(p.microInputs, rec, blk.Get("id").Str); ok {
					if v := lookupIn(blk, "input.todos"); len(v.Raw) >= microMin {
						stubValue(v, at+".input.todos", toolInfoOf(blk), why, why, false, "")
					}
				}
				for _, field := range inputFields[name] {
					v := lookupIn(blk, "input."+field)
					if len(v.Raw) > thr {
						stubValue(v, at+".input."+field, toolInfoOf(blk), "tool_use input "+field, overThreshold(name+" input "+field), false, "")
					}
				}
			}
			return true
		})
	}
	if f.Type == transcript.TypeUser {
		// The client never sends the toolUseResult copy: it goes by
		// --threshold alone, and copyParts' arithmetic needs a threshold
		// well above a stub's size.
		if len(tur.Raw) > o.Threshold {
			for _, c := range copyParts(tur, "toolUseResult", o.Threshold) {
				stubValue(c.v, c.name, firstResult, c.name+" copy", fmt.Sprintf("copy of the tool's output (never sent to the model) over --threshold %d", o.Threshold), false, "")
			}
		}
	}
	return sr.done(line)
}

// intern returns one copy of each path and reason the decider writes:
// the same few hundred strings recur in thousands of stubs.
func (d *decider) intern(s string) string {
	if v, ok := d.strs[s]; ok {
		return v
	}
	if d.strs == nil {
		d.strs = map[string]string{}
	}
	s = strings.Clone(s)
	d.strs[s] = s
	return s
}
