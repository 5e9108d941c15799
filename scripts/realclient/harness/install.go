package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"ccm/internal/fsutil"
)

// PinnedVersion is the Claude Code version the harness is written for and
// installs. Debug-log shapes and request shapes are those of this version.
const PinnedVersion = "2.1.330"

// npmPackage is the client's package on the npm registry.
const npmPackage = "@anthropic-ai/claude-code"

// ClientEnv names the variable that points the harness at a client binary
// of the caller's choice; an explicit choice never falls back to another.
const ClientEnv = "REALCLIENT_CLAUDE"

// CacheDir is where Install puts the client: ~/.cache/ccm-realclient.
func CacheDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for the client cache: %w", err)
	}
	return filepath.Join(home, ".cache", "ccm-realclient"), nil
}

// Install returns the path of a working client binary: $REALCLIENT_CLAUDE
// when it is set, else the pinned version in CacheDir, installing it with
// npm first if it is not there yet (npm's output goes to log, or with a
// nil log to npm-install.log in the cache folder). A cached
// install is reused without touching the network. Concurrent installs into
// the same folder wait for each other on a lock file.
func Install(ctx context.Context, log io.Writer) (string, error) {
	if p := os.Getenv(ClientEnv); p != "" {
		if !isExecutable(p) {
			return "", fmt.Errorf("%s=%s is not an executable file", ClientEnv, p)
		}
		return p, nil
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	return InstallInto(ctx, dir, log)
}

// InstallInto is Install with an explicit destination folder and no
// $REALCLIENT_CLAUDE override.
func InstallInto(ctx context.Context, dir string, log io.Writer) (string, error) {
	if p := findInstalled(ctx, dir); p != "" {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create the client cache: %w", err)
	}
	lock, err := fsutil.LockFile(ctx, filepath.Join(dir, ".install.lock"), true, 10*time.Minute)
	if err != nil {
		return "", fmt.Errorf("wait for another install of the client: %w", err)
	}
	defer lock.Unlock()
	// Another process may have installed it while we waited for the lock.
	if p := findInstalled(ctx, dir); p != "" {
		return p, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", errors.New("npm not found: install Node.js and npm, or set " + ClientEnv + " to a claude " + PinnedVersion + " binary")
	}
	pkg := filepath.Join(dir, "package.json")
	if _, err := os.Stat(pkg); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(pkg, []byte(`{"private": true}`+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	// Lifecycle scripts must run: the package's postinstall links the
	// platform binary (an optional dependency) over bin/claude.exe.
	cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund",
		npmPackage+"@"+PinnedVersion)
	where := ""
	if log == nil {
		logPath := filepath.Join(dir, "npm-install.log")
		where = " (npm's output: " + logPath + ")"
		f, err := os.Create(logPath)
		if err != nil {
			return "", err
		}
		defer f.Close()
		log = f
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install %s@%s: %v%s", npmPackage, PinnedVersion, err, where)
	}
	if p := findInstalled(ctx, dir); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("npm installed %s@%s into %s, but no binary there reports version %s", npmPackage, PinnedVersion, dir, PinnedVersion)
}

// findInstalled returns the first binary under dir that reports the pinned
// version: the npm link first, then the platform package's own binary,
// which is what is left when npm skipped the postinstall link.
func findInstalled(ctx context.Context, dir string) string {
	cands := []string{filepath.Join(dir, "node_modules", ".bin", "claude")}
	platform, _ := filepath.Glob(filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code-*", "claude"))
	cands = append(cands, platform...)
	for _, c := range cands {
		if isExecutable(c) && Version(ctx, c) == PinnedVersion {
			return c
		}
	}
	return ""
}

// Version runs `bin --version` and returns its first word ("2.1.330"), or
// "" when the binary does not run.
func Version(ctx context.Context, bin string) string {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Stdin = nil
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
