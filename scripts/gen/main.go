// Command gen writes a deterministic synthetic Claude Code transcript (and
// optionally its manifest) with ccm/synth. Examples:
//
//	go run ./scripts/gen -o /tmp/bench.jsonl -bench -size 200MB
//	go run ./scripts/gen -o /tmp/t.jsonl -turns 20 -thinking -progress -defects dangling-parent,torn-last-line -manifest /tmp/t.json
//	go run ./scripts/gen -o /tmp/s.jsonl -turns 12 -version 2.1.330 -progress -defects shapes -manifest /tmp/s.json
//	go run ./scripts/gen -o /tmp/agent.jsonl -agent a1b2c3d -turns 8
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"ccm/internal/synth"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	var (
		out      = fs.String("o", "", "output transcript `file` (- for stdout)")
		size     = fs.String("size", "", "stop after the turn that crosses this size (e.g. 200MB, 20MiB, 5000000)")
		turns    = fs.Int("turns", 0, "number of turns when -size is not given (default 10)")
		seed     = fs.Int64("seed", 42, "random seed")
		version  = fs.String("version", synth.DefaultVersion, "Claude Code version to imitate (2.0.76 or 2.1.330 style)")
		defects  = fs.String("defects", "", defectsUsage())
		manifest = fs.String("manifest", "", "write the manifest (JSON) to `file`")
		agent    = fs.String("agent", "", "write a subagent file with this agent id instead of a session")
		bench    = fs.Bool("bench", false, "benchmark preset: thinking, images, 2 compactions, pins, the earlier tools' benchmark defects")
		progress = fs.Bool("progress", false, "emit hook/bash/agent progress records in the chain")
		thinking = fs.Bool("thinking", false, "thinking blocks with signatures on every assistant message")
		images   = fs.Bool("images", false, "six ~40 KB base64 PNG images")
		compact  = fs.Int("compactions", 0, "number of compactions")
		side     = fs.Bool("sidechains", false, "inline sidechain records for Task calls")
		rewinds  = fs.Int("rewinds", 0, "number of rewind dead branches")
		pins     = fs.Bool("pins", false, "plant ccm:pin directives")
		inFlight = fs.Bool("inflight", false, "end the file after a tool_use with no result")
		session  = fs.String("session", "", "session id (default derived from the seed)")
		cwd      = fs.String("cwd", "", "working directory (default derived from the seed)")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("-o is required")
	}
	var o synth.Options
	var target int64
	if *size != "" {
		n, err := parseSize(*size)
		if err != nil {
			return err
		}
		target = n
	}
	if *bench {
		o = synth.Benchmark(*seed, target)
	}
	o.Seed, o.TargetBytes, o.Version = *seed, target, *version
	if target == 0 {
		o.Turns = *turns
	}
	ds, err := synth.ParseDefects(*defects)
	if err != nil {
		return err
	}
	o.Defects = append(o.Defects, ds...)
	o.Progress = o.Progress || *progress
	o.Thinking = o.Thinking || *thinking
	o.Images = o.Images || *images
	o.Compactions = max(o.Compactions, *compact)
	o.Sidechains, o.Rewinds, o.InFlight = *side, *rewinds, *inFlight
	o.Pins = o.Pins || *pins
	o.SessionID, o.Cwd = *session, *cwd

	var w io.Writer = os.Stdout
	if *out != "-" {
		f, err := os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	start := time.Now()
	var m synth.Manifest
	if *agent != "" {
		m, err = synth.WriteSubagent(w, o, *agent)
	} else {
		m, err = synth.Generate(w, o)
	}
	if err != nil {
		return err
	}
	if f, ok := w.(*os.File); ok && f != os.Stdout {
		if err := f.Close(); err != nil {
			return err
		}
	}
	el := time.Since(start)
	fmt.Fprintf(os.Stderr, "gen: %d lines, %d bytes, %d prompts (%d active), %d tool pairs, %d defects in %v (%.0f MB/s)\n",
		m.Lines, m.Bytes, m.Prompts, m.ActivePrompts, m.ToolPairs, len(m.Defects), el.Round(time.Millisecond),
		float64(m.Bytes)/1e6/el.Seconds())
	if *manifest != "" {
		j, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*manifest, append(j, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// parseSize parses "200MB" (10^6), "20MiB" (2^20), "64KB", "1GB" or plain bytes.
func parseSize(s string) (int64, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, x := range []struct {
		suf string
		m   int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}, {"B", 1}} {
		if strings.HasSuffix(u, x.suf) {
			u, mult = strings.TrimSuffix(u, x.suf), x.m
			break
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(u), 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(n * float64(mult)), nil
}

// defectsUsage is the help text of -defects: every name, and what the
// words all and shapes stand for.
func defectsUsage() string {
	return "comma-separated defects to plant; all = " + joinDefects(synth.AllDefects) +
		"; shapes (client shapes, not in all) = " + joinDefects(synth.ClientShapes)
}

func joinDefects(ds []synth.Defect) string {
	var s []string
	for _, d := range ds {
		s = append(s, string(d))
	}
	return strings.Join(s, ",")
}
