package prune

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"ccm/ccm"
	"ccm/internal/ui"
)

// WritePlan prints the plan, one line per blob: what goes, by which rule
// and why; with verbose also what stays and why. Columns: action, rule,
// key (or file), bytes on disk, pin level, last access, reason.
func (p *Plan) WritePlan(out io.Writer, verbose bool) error {
	// Buffered: a plan can have 100,000 lines, one write(2) each otherwise.
	w := bufio.NewWriterSize(out, 64<<10)
	if err := p.writeLines(w, verbose); err != nil {
		return err
	}
	return w.Flush()
}

func (p *Plan) writeLines(w io.Writer, verbose bool) error {
	lines := p.Deletions
	if verbose {
		lines = append(append([]Decision(nil), p.Deletions...), p.Kept...)
	}
	for _, d := range lines {
		action, rule := "keep", "-"
		if d.Delete {
			action, rule = "delete", d.Rule
		}
		name := string(d.Key)
		if name == "" {
			name = p.rel(d.Path)
		}
		access := "-"
		if !d.LastAccess.IsZero() {
			access = d.LastAccess.Local().Format("2006-01-02 15:04")
		}
		if _, err := fmt.Fprintf(w, "%-6s  %-4s  %s  %9s  %-4s  %s  %s\n",
			action, rule, name, ui.Bytes(d.DiskBytes), d.Pin, access, d.Reason); err != nil {
			return err
		}
	}
	return p.writeRepack(w, verbose)
}

// writeRepack prints the repack's lines: packs removed or rewritten (and,
// with verbose, kept), and every blob it copies, each with its reason.
func (p *Plan) writeRepack(w io.Writer, verbose bool) error {
	if p.Repack == nil {
		return nil
	}
	for _, a := range p.Repack.Packs {
		action := "repack"
		switch a.Action {
		case ccm.PackKeep:
			if !verbose {
				continue
			}
			action = "keep"
		case ccm.PackDelete:
			action = "delete"
		}
		if _, err := fmt.Fprintf(w, "%-6s  %-4s  %s  %9s  %-4s  %s  %s\n",
			action, "pack", p.rel(a.Path), ui.Bytes(a.Size), "-", "-", a.Reason); err != nil {
			return err
		}
	}
	for _, m := range p.Repack.Moves {
		if _, err := fmt.Fprintf(w, "%-6s  %-4s  %s  %9s  %-4s  %s  %s\n",
			"move", "pack", m.Key, ui.Bytes(m.Bytes), "-", "-", m.Reason); err != nil {
			return err
		}
	}
	return nil
}

// repackSummary is the repack's part of the summary line.
func (p *Plan) repackSummary(res *Result) string {
	if p.Repack == nil || !p.Repack.Any() {
		return ""
	}
	rewrite, drop := 0, 0
	for _, a := range p.Repack.Packs {
		switch a.Action {
		case ccm.PackRewrite:
			rewrite++
		case ccm.PackDelete:
			drop++
		}
	}
	if res == nil {
		return fmt.Sprintf("; repack: would rewrite %s packs (%s blobs copied) and remove %s, freeing %s",
			ui.Count(rewrite), ui.Count(len(p.Repack.Moves)), ui.Count(drop), ui.Bytes(p.Repack.Freed))
	}
	return fmt.Sprintf("; repack: rewrote %s packs (%s blobs copied) and removed %s, freed %s",
		ui.Count(rewrite), ui.Count(len(p.Repack.Moves)), ui.Count(drop), ui.Bytes(res.RepackFreed))
}

func (p *Plan) rel(path string) string {
	if p.Root != "" {
		if r, err := filepath.Rel(p.Root, path); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return path
}

// Summary is the one line a cron job prints. res is nil for a dry run.
func (p *Plan) Summary(res *Result) string {
	gc, age, size := p.Counts()
	var b strings.Builder
	blobs := 0
	for _, d := range p.Deletions {
		if d.Key != "" {
			blobs++
		}
	}
	rules := fmt.Sprintf("gc %s, age %s, size %s", ui.Count(gc), ui.Count(age), ui.Count(size))
	if res == nil {
		fmt.Fprintf(&b, "prune (dry run): would delete %s of %s blobs (%s), %s on disk; %s would remain",
			ui.Count(blobs), ui.Count(p.Blobs), rules, ui.Bytes(p.DeleteBytes()), ui.Bytes(p.SizeAfter))
	} else {
		fmt.Fprintf(&b, "prune: deleted %s of %s planned (%s), freed %s; %s on disk",
			ui.Count(res.Deleted), ui.Count(len(p.Deletions)), rules, ui.Bytes(res.Freed), ui.Bytes(res.SizeAfter))
	}
	if p.Policy.SizeLimit {
		fmt.Fprintf(&b, ", limit %s", ui.Bytes(p.Policy.MaxBytes))
	}
	b.WriteString(p.repackSummary(res))
	if x := p.Index; x != nil {
		fmt.Fprintf(&b, "; %s keys referenced by %s files (%s read, %s)", ui.Count(x.Keys), ui.Count(x.Files), ui.Count(x.Read+x.Grown), ui.Bytes(x.BytesRead))
		if x.Rebuilt != "" {
			fmt.Fprintf(&b, ", reference index made anew: %s", x.Rebuilt)
		}
		if len(x.Unreachable) > 0 {
			fmt.Fprintf(&b, "; kept what %s referenced (not reachable now)", strings.Join(x.Unreachable, ", "))
		}
	}
	if line := p.OverLimitLine(); line != "" {
		b.WriteString("; " + line)
	}
	if res != nil && len(res.Errors) > 0 {
		fmt.Fprintf(&b, "; %s deletions failed", ui.Count(len(res.Errors)))
	}
	return b.String()
}

// OverLimitLine says what keeps the store over its size limit after the
// plan, "" when nothing does: how much referenced content, and the
// command that would evict it; blobs too recent to delete; hard pins.
func (p *Plan) OverLimitLine() string {
	if p.OverLimit <= 0 {
		return ""
	}
	var why []string
	if p.HeldReferenced > 0 {
		why = append(why, fmt.Sprintf("%s that transcripts, backups or archives reference (part of their sessions; ccm prune --max-size-mb %s --evict-referenced would delete it)",
			ui.Bytes(p.HeldReferenced), mbArg(p.Policy.MaxBytes)))
	}
	if p.HeldRecent > 0 {
		why = append(why, fmt.Sprintf("%s stored or used within the last %s", ui.Bytes(p.HeldRecent), ui.Age(p.Policy.grace())))
	}
	if p.HeldHard > 0 {
		why = append(why, ui.Bytes(p.HeldHard)+" hard-pinned")
	}
	if len(why) == 0 {
		why = append(why, "nothing else can go")
	}
	return fmt.Sprintf("still %s over the limit; kept: %s", ui.Bytes(p.OverLimit), strings.Join(why, ", "))
}

// mbArg writes a size limit as --max-size-mb takes it.
func mbArg(bytes int64) string {
	return strconv.FormatFloat(math.Round(float64(bytes)/MiB*1e4)/1e4, 'f', -1, 64)
}
