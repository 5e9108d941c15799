package hooklib

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"ccm/hooklib/preserve"
	"ccm/internal/fsutil"
)

func init() {
	also(PreCompact, preserveAtPreCompact)
	also(SessionStart, injectAfterCompact)
	also(SessionEnd, forgetPreserved)
}

// preserveStale is how old a saved block may be and still be injected: a
// compaction follows its PreCompact within seconds to minutes.
const preserveStale = 6 * time.Hour

// preservedPath is where a session's block waits for the SessionStart that
// follows the compaction; injectedSuffix marks one already injected (kept
// for the user to read).
func preservedPath(home, session string) string {
	return filepath.Join(home, "preserve", strings.TrimSuffix(fileName(session), ".json")+".md")
}

const injectedSuffix = ".injected"

// compactInstructionFiles are the user's compact instructions: the earlier
// tool's path and ccm's own.
func compactInstructionFiles(c *Config) []string {
	return []string{filepath.Join(c.ClaudeDir, "compact-instructions.txt"), filepath.Join(c.Home, "compact-instructions.txt")}
}

// preserveBudget leaves room in the SessionStart output for the other
// features' text (the effort policy's is about 250 characters).
func preserveBudget() int { return ContextBudget(SessionStart) - 800 }

// preserveAtPreCompact builds the preservation block and saves it. Only
// systemMessage is allowed at PreCompact, so the user is told it was
// saved; the model gets it after the compaction.
func preserveAtPreCompact(ctx context.Context, h *Hook, _ Response) (Response, error) {
	sid := h.In.SessionID()
	if sid == "" || !h.Config.Bool("PRECOMPACT_PRESERVE_ENABLED") {
		return Response{}, nil
	}
	path := h.In.TranscriptPath()
	if path == "" {
		return Response{}, errors.New("preserve: no transcript_path")
	}
	block, st, err := preserve.Build(preserve.Options{Transcript: path, Cwd: h.In.Cwd(), Trigger: h.In.Trigger(),
		Focus: h.In.CustomInstructions(), InstructionFiles: compactInstructionFiles(h.Config),
		Cold: h.coldSummaries(sid), Budget: preserveBudget(), Size: Size})
	if err != nil {
		return Response{}, fmt.Errorf("preserve: %w", err)
	}
	if block == "" {
		h.Log.Printf("preserve: nothing to preserve")
		return Response{}, nil
	}
	dst := preservedPath(h.Config.Home, sid)
	if err := fsutil.MkdirPrivate(filepath.Dir(dst)); err != nil {
		return Response{}, fmt.Errorf("preserve: %w", err)
	}
	// The block replaces any earlier one of the session, which is stale
	// now. Removed first, because a rename over an existing file makes
	// ext4 (auto_da_alloc) start writing the new file out on the spot:
	// the hook's one disk write, about 0.15 ms of its run.
	os.Remove(dst)
	if err := fsutil.WriteFileVolatile(dst, fsutil.FileMode, []byte(block)); err != nil {
		return Response{}, fmt.Errorf("preserve: %w", err)
	}
	os.Remove(dst + injectedSuffix)
	git := "git diff"
	if !st.Git {
		git = "no git diff (" + st.GitNote + ")"
	}
	h.Log.Printf("preserve: saved %d chars (bytes %d-%d read; %d open tasks, %d files, %d tests, %d errors, %d decisions, %d cold summaries, %s)",
		Size(block), st.ReadFrom, st.ReadTo, st.OpenTasks, st.Files, st.Tests, st.Errors, st.Decisions, st.Cold, git)
	return Response{SystemMessage: fmt.Sprintf("ccm: saved the working state for after the compaction: %d open task(s), %d file(s) modified, %d test command(s), %d error(s), %d decision(s), %s.",
		st.OpenTasks, st.Files, st.Tests, st.Errors, st.Decisions, git)}, nil
}

// injectAfterCompact gives the model the block saved at PreCompact, on
// the SessionStart that follows the compaction.
func injectAfterCompact(ctx context.Context, h *Hook, prev Response) (Response, error) {
	sid := h.In.SessionID()
	if sid == "" || h.In.Source() != "compact" || !h.Config.Bool("PRECOMPACT_PRESERVE_ENABLED") {
		return Response{}, nil
	}
	src := preservedPath(h.Config.Home, sid)
	fi, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		h.Log.Printf("preserve: no saved state to inject after compaction")
		return Response{}, nil
	}
	if err != nil {
		return Response{}, fmt.Errorf("preserve: %w", err)
	}
	if h.Now.Sub(fi.ModTime()) > preserveStale {
		h.Log.Printf("preserve: saved state is from %s, too old to inject", fi.ModTime().UTC().Format(time.RFC3339))
		return Response{}, nil
	}
	data, err := fsutil.ReadRegular(src, maxReadFile)
	if err != nil {
		return Response{}, fmt.Errorf("preserve: %w", err)
	}
	if err := os.Rename(src, src+injectedSuffix); err != nil {
		h.Log.Printf("preserve: %v", err)
	}
	text := fitText(string(data), room(SessionStart, prev))
	h.Log.Printf("preserve: injected %d chars after compaction", Size(text))
	return Response{Context: text}, nil
}

// forgetPreserved removes the session's saved blocks at its end.
func forgetPreserved(ctx context.Context, h *Hook, _ Response) (Response, error) {
	if sid := h.In.SessionID(); sid != "" {
		p := preservedPath(h.Config.Home, sid)
		os.Remove(p)
		os.Remove(p + injectedSuffix)
	}
	return Response{}, nil
}
