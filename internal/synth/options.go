package synth

import (
	"fmt"
	"strings"
)

// Options selects what Generate writes. The zero value is valid: ten turns of
// a 2.0.76-style transcript with no extras, seed 0.
type Options struct {
	// Seed drives every random choice; the same Options give the same bytes.
	Seed int64
	// TargetBytes stops generation after the turn that crosses this size
	// (0 = use Turns).
	TargetBytes int64
	// Turns is the number of user prompts (turns) when TargetBytes == 0;
	// 0 means 10.
	Turns int
	// Version is the Claude Code version written on every record: "2.0.76"
	// (default) or a 2.1.3xx version such as "2.1.330", which adds the
	// per-turn attachment and api-request-* records, promptId, entrypoint,
	// effort, and sourceToolAssistantUUID on tool results.
	Version string
	// Progress emits progress records inside the chain: hook_progress after
	// each tool_use line and each tool result, bash_progress before long
	// Bash results, agent_progress for Task calls, and the Stop hook's
	// stop_hook_summary at the end of a turn.
	Progress bool
	// Thinking gives every assistant message a thinking block (30–1200
	// words, a 270–930 character base64 signature) on its own line.
	Thinking bool
	// Images plants six PNG-like base64 images of about 40 KB, alternately
	// top-level in a user prompt and inside a Read tool_result array.
	Images bool
	// Compactions is the number of real compactions (compact_boundary with
	// logicalParentUuid, then the isCompactSummary user record), spread
	// evenly over the transcript, at most one before each turn but the
	// first (Manifest.Compactions says how many were written).
	Compactions int
	// Sidechains writes inline sidechain records (isSidechain:true) between
	// each Task tool_use and its result; see also WriteSubagent.
	Sidechains bool
	// Rewinds is the number of rewind forks: a dead branch (prompt, tool
	// round, reply) under an earlier parent, abandoned for a new prompt
	// under the same parent.
	Rewinds int
	// Pins plants ccm:pin directives: "next" (hard) and "start"/"end"
	// (soft) in user prompts, "last" (hard, with a reason) in assistant text.
	Pins bool
	// InFlight ends the file right after a tool_use line whose result was
	// never written, as a crash mid-tool leaves it (no summary follows).
	InFlight bool
	// Defects to plant, each at a deterministic position; a kind may be
	// listed more than once.
	Defects []Defect
	// SessionID and Cwd default to values derived from Seed.
	SessionID, Cwd string
}

// Defect names one kind of damage Generate can plant.
type Defect string

// The defects Generate can plant. Each planted instance is reported in
// Manifest.Defects with its 1-based line number.
const (
	// DanglingParent: a user tool_result record (the one that continues the
	// chain) whose parentUuid names a uuid absent from the file, written
	// 30 s after the previous record so that 2.1.330's 5 s bridge does not
	// hide it. The active chain starts again at this record.
	DanglingParent Defect = "dangling-parent"
	// OrphanToolUse: in a round of two or more parallel tool_uses, the first
	// tool_use never gets a tool_result.
	OrphanToolUse Defect = "orphan-tool-use"
	// OrphanToolResult: in a round of two or more parallel tool_uses, the
	// first tool_use line is missing (as if removed and its child relinked);
	// its tool_result is still written.
	OrphanToolResult Defect = "orphan-tool-result"
	// EmptyContent: an extra assistant line with "content":[] inside a split
	// message.
	EmptyContent Defect = "empty-content"
	// EmptyText: an assistant line whose only block is {"type":"text","text":""}.
	EmptyText Defect = "empty-text"
	// MissingSignature: an assistant thinking block without a "signature" key.
	MissingSignature Defect = "missing-signature"
	// DuplicateUUID: a user prompt line written twice, byte for byte, so two
	// lines share one uuid.
	DuplicateUUID Defect = "duplicate-uuid"
	// TornLastLine: the file ends with the first part of an assistant record
	// and no newline. Planted once, however often it is listed.
	TornLastLine Defect = "torn-last-line"
	// InvalidLine: a line holding the first part of a record (not valid JSON)
	// in the middle of the file, followed by more records.
	InvalidLine Defect = "invalid-line"
	// NULPadding: a run of 4096 NUL bytes immediately followed, on the same
	// line, by a queue-operation record, as an interrupted append leaves it.
	NULPadding Defect = "nul-padding"
	// ArrayLine: a line that is a JSON array (of one queue-operation object).
	ArrayLine Defect = "array-line"
	// BlankLine: an empty line.
	BlankLine Defect = "blank-line"
)

// The client shapes Generate can plant: things real Claude Code files hold
// (docs/transcript-format.md, "How a resume rebuilds the conversation")
// that look like damage to a naive reader but that the client itself writes,
// so purge and check must keep them working.
// They are not in AllDefects (see ClientShapes).
const (
	// ParallelFork: a round of two or three parallel tool_use lines of one
	// message, each chained under the previous one (no progress record
	// between them), answered by one tool_result record per call whose
	// parentUuid (and sourceToolAssistantUUID, in 2.1.x files) is the line
	// holding its own tool_use. The first result holds its tool_result
	// block then a text block (the user typed while the tools ran); the
	// last result continues the chain. With Progress, the PreToolUse
	// hook_progress of each call is written just before its result,
	// hanging off its tool_use line, and the PostToolUse one after it.
	// Line is the first result; UseLines and ResultLines list the round.
	ParallelFork Defect = "parallel-fork"
	// UnterminatedLastRecord: the file ends with a complete system
	// stop_hook_summary record and no newline; its parentUuid is the last
	// of one or two Stop hook_progress records (written even without
	// Progress) hanging off the last assistant or user record. It comes
	// after the summary record, whose leafUuid names the tip before it.
	// With InFlight the progress records hang off the unanswered tool_use
	// line, which still gets no result.
	// Planted once however often it is listed, and not at all when
	// TornLastLine is listed too (a file has one end; the torn line wins).
	// Main files only: WriteSubagent ignores it.
	UnterminatedLastRecord Defect = "unterminated-last-record"
	// MidwayRoot: the file starts mid-way, as a session continued into a
	// new file does: line 1 is a system stop_hook_summary whose parentUuid
	// names a uuid that is in no record of the file, and the first prompt
	// hangs off it. No record before it has a uuid. Planted once however
	// often listed; main files only: WriteSubagent ignores it.
	MidwayRoot Defect = "midway-root"
)

// AllDefects lists every damage kind, in a stable order. The client shapes
// (ClientShapes) are left out on purpose: "-defects all" is fed to the real
// client by scripts/realclient-resume.sh and to purge's and check's
// expectations, which were written for damage, not for shapes the client
// writes itself.
var AllDefects = []Defect{
	DanglingParent, OrphanToolUse, OrphanToolResult, EmptyContent, EmptyText,
	MissingSignature, DuplicateUUID, TornLastLine, InvalidLine, NULPadding,
	ArrayLine, BlankLine,
}

// ClientShapes lists the client shapes, in a stable order. ParseDefects
// spells it "shapes".
var ClientShapes = []Defect{ParallelFork, UnterminatedLastRecord, MidwayRoot}

// ParseDefects parses a comma-separated list of defect names ("" gives nil).
// "all" stands for AllDefects and "shapes" for ClientShapes.
func ParseDefects(s string) ([]Defect, error) {
	var out []Defect
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
		case f == "all":
			out = append(out, AllDefects...)
		case f == "shapes":
			out = append(out, ClientShapes...)
		case known(Defect(f)):
			out = append(out, Defect(f))
		default:
			return nil, fmt.Errorf("unknown defect %q", f)
		}
	}
	return out, nil
}

func known(d Defect) bool {
	return count(AllDefects, d) > 0 || count(ClientShapes, d) > 0
}

// DefaultVersion is the Claude Code version written when Options.Version is
// empty.
const DefaultVersion = "2.0.76"

// Benchmark returns the options of the realistic benchmark transcript, the
// mix of the 210 MB file the earlier tools were measured on
// (docs/earlier-tools.md, "Reference figures"): 2.0.76 style, thinking,
// images, two compactions, two broken parents, an orphan result, two orphan
// tool_uses and pin directives, stopping after targetBytes.
func Benchmark(seed, targetBytes int64) Options {
	return Options{
		Seed:        seed,
		TargetBytes: targetBytes,
		Thinking:    true,
		Images:      true,
		Compactions: 2,
		Pins:        true,
		Defects: []Defect{DanglingParent, OrphanToolUse, OrphanToolResult,
			DanglingParent, OrphanToolUse},
	}
}

// normalize validates o and fills the defaults.
func (o Options) normalize() (Options, error) {
	if o.TargetBytes < 0 || o.Turns < 0 || o.Compactions < 0 || o.Rewinds < 0 {
		return o, fmt.Errorf("synth: negative size, turns, compactions or rewinds")
	}
	if o.TargetBytes == 0 && o.Turns == 0 {
		o.Turns = 10
	}
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	for _, d := range o.Defects {
		if !known(d) {
			return o, fmt.Errorf("synth: unknown defect %q", d)
		}
	}
	r := newRand(o.Seed, 7)
	if o.SessionID == "" {
		o.SessionID = newUUID(r).String()
	}
	if o.Cwd == "" {
		o.Cwd = "/home/dev/projects/" + words[20+r.IntN(60)] + "-" + words[140+r.IntN(20)]
	}
	return o, nil
}

// patch returns the x of a "2.1.x" version, or -1 for other versions.
func (o Options) patch() int {
	rest, ok := strings.CutPrefix(o.Version, "2.1.")
	if !ok {
		return -1
	}
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// sourceTool reports whether tool results carry sourceToolAssistantUUID
// (2.1.x; 2.0.74 files do not have it).
func (o Options) sourceTool() bool { return o.patch() >= 0 }

// newRecords reports whether o.Version writes the 2.1.226+ shapes: attachment
// and api-request-* records per turn, promptId, entrypoint, effort.
func (o Options) newRecords() bool { return o.patch() >= 226 }
