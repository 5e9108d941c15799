package report

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"ccm/internal/ui"
	"ccm/purge"
	"ccm/purge/restore"
	"ccm/sessions"
	"ccm/transcript"
)

// Session is everything the page shows about one transcript.
type Session struct {
	Path     string    `json:"path"`
	ID       string    `json:"session"`
	Bytes    int64     `json:"bytes"`
	Lines    int       `json:"lines"`
	Records  int       `json:"records"`
	Modified time.Time `json:"modified"`
	Project  string    `json:"project,omitempty"` // the records' cwd
	Title    string    `json:"title,omitempty"`
	Prompt   string    `json:"first_prompt,omitempty"`
	Model    string    `json:"model,omitempty"` // the model of most requests
	// Window is the model's context window: 200k tokens, or 1M when the
	// model name says so or a request already used more than 200k.
	Window int64 `json:"window"`

	Analysis   *transcript.Analysis `json:"analysis"`
	Turns      []Turn               `json:"turns"`
	SideTurns  int                  `json:"subagent_requests"` // requests of inline sidechains, not on the curve
	Boundaries []Marker             `json:"compact_boundaries"`
	Purges     []Marker             `json:"purges"`
	Stubs      int                  `json:"records_with_ccm_stubs"`
	// StoreBlobs and StoreBytes are the distinct blobs the stubs name and
	// the bytes they stand for (from the stubs' own fields).
	StoreBlobs int        `json:"store_blobs"`
	StoreBytes int64      `json:"store_bytes"`
	Tools      []Consumer `json:"tools"`
	Commands   []Consumer `json:"commands"`

	Errors, Warnings int                  `json:"-"`
	Findings         []transcript.Finding `json:"findings"`

	// After is the context each request would have stood for had the
	// purge's dry run been applied before it (see purgeCurve), or nil.
	After       []int64              `json:"after_purge,omitempty"`
	PurgeReport *purge.Report        `json:"purge,omitempty"`
	PurgeNote   string               `json:"purge_note,omitempty"` // why there is no second curve
	Estimate    *transcript.Estimate `json:"-"`

	// Missing lists what the page cannot show and why.
	Missing []string `json:"missing,omitempty"`

	origCum []cumPoint
}

// Options configure Collect.
type Options struct {
	// Purge draws the second curve from a dry run of ccm purge.
	Purge bool
	// PurgeOptions are the purge's options (DryRun is forced).
	PurgeOptions purge.Options
	// PurgeLimit, when positive, skips the purge curve of a transcript
	// larger than this many bytes (the page says so).
	PurgeLimit int64
}

// Collect reads one transcript and gathers the figures of its page.
func Collect(ctx context.Context, path string, opt Options) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: is a directory (pass a transcript file)", path)
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("%s: empty file (0 bytes), nothing to show", path)
	}
	subagent := transcript.IsSubagentPath(path)
	c := newCollector()
	c.subagent = subagent
	cum := &cumulator{subagent: subagent}
	visit := func(l transcript.Line, rec transcript.Record, fa *transcript.Facts, sz *transcript.Sizes) error {
		if fa != nil && isRequestLine(fa, subagent) {
			n := len(c.turns)
			if n == 0 || fa.MsgID() == "" || c.turns[n-1].msgID != fa.MsgID() {
				cum.mark(fa.MsgID())
			}
		}
		cum.take(fa)
		return c.visit(l, rec, fa, sz)
	}
	ix, a, err := transcript.Analyze(f, transcript.AnalyzeOptions{Top: 10, Visit: visit})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &Session{Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Bytes: a.Bytes, Lines: a.Lines,
		Records: ix.Len(), Modified: fi.ModTime(), Analysis: a, Turns: c.turns, SideTurns: c.sideTurns,
		Boundaries: c.boundaries, Stubs: c.stubs, Tools: topConsumers(c.tools, 12), Commands: topConsumers(c.commands, 12),
		origCum: cum.points}
	if pk, err := sessions.PeekFile(path, fi.Size()); err == nil {
		s.Project, s.Title, s.Prompt = pk.Cwd, pk.Title, pk.FirstPrompt
	}
	for _, n := range c.stubKeys {
		s.StoreBlobs++
		s.StoreBytes += n
	}
	if s.Turns == nil {
		s.Turns = []Turn{} // JSON: an empty list, not null
	}
	chain := ix.ActiveChain()
	if u, ok := ix.ChainUsage(chain); ok {
		a.LastUsage = &u
	}
	s.Findings = transcript.Check(ix, transcript.CheckOptions{Subagent: transcript.IsSubagentPath(path)})
	for _, x := range s.Findings {
		if x.Severity == transcript.Error {
			s.Errors++
		} else {
			s.Warnings++
		}
	}
	s.Model, s.Window = modelWindow(c.models, c.turns)
	s.Purges = purgeMarkers(path, c.turns)
	if len(c.turns) == 0 {
		s.Missing = append(s.Missing, "no request in this transcript records its token usage (Claude Code before 1.0 wrote none, and a session that never reached the model has none): there is no context curve")
	}
	for _, b := range ix.Bad {
		if b.Kind == transcript.Torn {
			s.Missing = append(s.Missing, fmt.Sprintf("line %d is torn (cut off, no newline): it is left out", b.Line))
		}
	}
	switch n := len(ix.Bad); {
	case n == 1:
		s.Missing = append(s.Missing, fmt.Sprintf("line %d is not a record (torn, invalid or NUL padding): see the findings", ix.Bad[0].Line))
	case n > 1:
		s.Missing = append(s.Missing, fmt.Sprintf("%d lines are not records (torn, invalid or NUL padding): see the findings", n))
	}
	if opt.Purge && opt.PurgeLimit > 0 && fi.Size() > opt.PurgeLimit && len(c.turns) > 0 {
		opt.Purge = false
		s.PurgeNote = fmt.Sprintf("no purge curve: the transcript is over %s, and the purge's dry run would read it twice more (ccm report --purge draws it)", ui.Bytes(opt.PurgeLimit))
	}
	if opt.Purge && len(c.turns) > 0 {
		// After the reading of the original, not beside it: on two cores
		// the two passes side by side took 30 % more CPU and time.
		if err := startPurgeCurve(ctx, path, opt.PurgeOptions)(s); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil, err
			}
			s.PurgeNote = "no purge curve: " + err.Error()
		}
	}
	return s, nil
}

// modelWindow names the most used model and its context window.
func modelWindow(models map[string]int, turns []Turn) (string, int64) {
	best, n := "", 0
	for m, k := range models {
		if k > n || k == n && m < best {
			best, n = m, k
		}
	}
	window := int64(200_000)
	for m := range models {
		if strings.Contains(strings.ToLower(m), "[1m]") {
			window = 1_000_000
		}
	}
	for _, t := range turns {
		if t.Context() > 200_000 {
			window = 1_000_000
		}
	}
	return best, window
}

// purgeMarkers places the transcript's purge backups on the curve: a
// backup is named by the time of the purge that made it.
func purgeMarkers(path string, turns []Turn) []Marker {
	backups, err := restore.Backups(path)
	if err != nil || len(turns) == 0 {
		return nil
	}
	var out []Marker
	for _, b := range backups {
		rest := strings.TrimSuffix(strings.TrimPrefix(b, path+".backup."), ".zst")
		stamp, _, _ := strings.Cut(rest, "-")
		at, err := time.ParseInLocation(purge.BackupStamp, stamp, time.Local)
		if err != nil {
			continue
		}
		i := sort.Search(len(turns), func(i int) bool { return !turns[i].Time.IsZero() && turns[i].Time.After(at) })
		out = append(out, Marker{Turn: i, Label: "ccm purge " + at.Format("2006-01-02 15:04")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Turn < out[j].Turn })
	return out
}

// IsNotExist tells a missing input from other failures.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
