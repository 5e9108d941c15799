package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf16"

	"ccm/internal/fsutil"

	"github.com/tidwall/gjson"
)

// ConfigDir resolves the Claude Code config directory: an explicit value
// (from --claude-dir or $CLAUDE_CONFIG_DIR) wins, else ~/.claude.
func ConfigDir(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ".claude"
	}
	return filepath.Join(home, ".claude")
}

// ErrNoConfigDir is a Claude Code config directory that does not exist (or
// is not a directory).
var ErrNoConfigDir = errors.New("config dir does not exist")

// CheckConfigDir reports a config dir that is not an existing directory,
// in the one wording every command and the hooks share. Nothing that ccm
// writes is created in a config dir before this check has passed: a typo
// in --claude-dir or CLAUDE_CONFIG_DIR must fail loudly, not quietly
// create a second config dir.
func CheckConfigDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: %s (set --claude-dir or CLAUDE_CONFIG_DIR)", ErrNoConfigDir, dir)
	}
	return fmt.Errorf("config dir %s: %w", dir, err)
}

// ProjectsDir is where Claude Code keeps one folder per project.
func ProjectsDir(configDir string) string {
	return filepath.Join(configDir, "projects")
}

// maxProjectName is the length, in UTF-16 code units, past which Claude
// Code cuts a project folder name and appends a hash.
const maxProjectName = 200

// ProjectDirName encodes an absolute working directory the way Claude Code
// names its project folder. Claude Code works on the path as a JavaScript
// string: every UTF-16 code unit that is not an ASCII letter or digit
// becomes '-' (so "é" is one '-', a character beyond the BMP, a surrogate
// pair, two, an invalid byte one, and a Windows path such as
// C:\Users\me\proj gives C--Users-me-proj). A name longer than 200 code
// units is cut to 200, and '-' and a hash of the whole path are appended:
// the path's 32-bit Java-style string hash (h = 31*h + unit over its
// UTF-16 code units), its absolute value in base 36. A Linux path and a
// Windows path encode the same whichever system ccm runs on.
// $CLAUDE_CODE_PROJECT_DIR_NAME pins the name, but only together with
// $CLAUDE_CONFIG_DIR, as in Claude Code.
func ProjectDirName(cwd string) string {
	if pinned := os.Getenv("CLAUDE_CODE_PROJECT_DIR_NAME"); pinned != "" && os.Getenv("CLAUDE_CONFIG_DIR") != "" {
		return pinned
	}
	return EncodeProjectDir(cwd)
}

// EncodeProjectDir is ProjectDirName without the pinned name: the folder
// Claude Code derives from the path alone.
func EncodeProjectDir(cwd string) string {
	units := utf16.Encode([]rune(cwd))
	b := make([]byte, len(units))
	var h int32
	for i, u := range units {
		h = 31*h + int32(u)
		if u < 0x80 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			b[i] = byte(u)
		} else {
			b[i] = '-'
		}
	}
	if len(b) <= maxProjectName {
		return string(b)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return string(b[:maxProjectName]) + "-" + strconv.FormatInt(abs, 36)
}

// IsSessionFileName reports whether name is a main session transcript:
// <id>.jsonl, not a legacy flat agent-*.jsonl file, not a backup or temp file.
func IsSessionFileName(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, "agent-") && !strings.HasPrefix(name, ".")
}

// IsSubagentPath reports whether a transcript path is a subagent file
// (either layout), whose parents may point into the main session.
func IsSubagentPath(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, "agent-") || strings.Contains(filepath.ToSlash(path), "/subagents/")
}

// SessionCwd returns the working directory that a session transcript
// belongs to: the first "cwd" of its records whose project folder name is
// the folder the transcript is in. Claude Code finds a session to resume
// by the directory it is started in, so that is where `claude --resume`
// must run. It returns "" when no record matches (a file outside a
// project folder, or a folder that was renamed).
func SessionCwd(path string) string {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	folder := filepath.Base(filepath.Dir(path))
	rd := NewReader(f)
	for {
		l, err := rd.Next()
		if err != nil {
			return ""
		}
		if l.Kind != Object || !bytes.Contains(l.Raw, []byte(`"cwd"`)) {
			continue
		}
		if cwd := gjson.GetBytes(l.Body(), "cwd").Str; cwd != "" && ProjectDirName(cwd) == folder {
			return cwd
		}
	}
}
