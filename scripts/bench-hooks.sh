#!/usr/bin/env bash
# Measure ccm hook latency the way Claude Code pays it: one process start per
# event. Builds ccm, then execs it RUNS times per scenario with a realistic
# stdin payload and reports the median and p95 wall time per invocation.
# A minimal Go binary (read stdin, print a line) is measured first as the
# machine's floor for starting any Go process.
#
#   scripts/bench-hooks.sh            # 300 runs per scenario
#   RUNS=1000 scripts/bench-hooks.sh
#
# ccm is built the plain way, as `go install ./cmd/ccm` builds it (no
# CGO_ENABLED=0): that build must be static (no dynamic loader, no libc
# start-up), and on ELF systems the script checks it is and stops if not.
# Everything happens in a temp dir; ~/.claude is never touched.
set -euo pipefail
runs="${RUNS:-300}"
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

(cd "$root" && go build -o "$tmp/ccm" ./cmd/ccm)

# The driver and the floor binary are standalone programs (standard library
# only) so the measurement does not depend on a shell's fork cost.
mkdir -p "$tmp/driver" "$tmp/floor"
cat > "$tmp/floor/main.go" <<'EOF'
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	b, _ := io.ReadAll(os.Stdin)
	fmt.Println(len(b))
}
EOF
cat > "$tmp/driver/main.go" <<'EOF'
package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

// usage: driver RUNS NAME PAYLOAD-FILE ENV(k=v,k=v|-) BINARY ARGS...
//        driver linking BINARY
func main() {
	if os.Args[1] == "linking" {
		linking(os.Args[2])
		return
	}
	runs, _ := strconv.Atoi(os.Args[1])
	name, payloadFile, envs := os.Args[2], os.Args[3], os.Args[4]
	payload, err := os.ReadFile(payloadFile)
	if err != nil {
		panic(err)
	}
	env := os.Environ()
	if envs != "-" {
		env = append(env, strings.Split(envs, ",")...)
	}
	var ts, cpu []time.Duration
	for i := 0; i < runs+10; i++ {
		cmd := exec.Command(os.Args[5], os.Args[6:]...)
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(payload)
		var out bytes.Buffer
		cmd.Stdout = &out
		t := time.Now()
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
		if i >= 10 { // the first runs warm the page cache
			ts = append(ts, time.Since(t))
			cpu = append(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	sort.Slice(cpu, func(i, j int) bool { return cpu[i] < cpu[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	fmt.Printf("%-46s wall median %6.2f ms  p95 %6.2f ms  min %6.2f ms | CPU median %5.2f ms\n",
		name, ms(ts[len(ts)/2]), ms(ts[len(ts)*95/100]), ms(ts[0]), ms(cpu[len(cpu)/2]))
}

// linking says whether an ELF binary is static (no program interpreter)
// and exits 1 when it is not; other formats are only named.
func linking(path string) {
	f, err := elf.Open(path)
	if err != nil {
		fmt.Println("linking: not an ELF binary, not checked")
		return
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			fmt.Printf("linking: the plain build of ccm is dynamically linked (it has a program interpreter): a package of its build uses cgo\n")
			os.Exit(1)
		}
	}
	fmt.Println("linking: static (a plain go build, as go install makes it)")
}
EOF
(cd "$tmp/floor" && go mod init floor >/dev/null 2>&1 && go build -o "$tmp/floorbin" .)
(cd "$tmp/driver" && go mod init driver >/dev/null 2>&1 && go build -o "$tmp/drive" .)

export CLAUDE_CONFIG_DIR="$tmp/claude" CCM_HOME="$tmp/claude/ccm"
unset CCM_HOOKS_DISABLED CLAUDE_HOOKS_PASSTHROUGH || true
mkdir -p "$CLAUDE_CONFIG_DIR/rules" "$tmp/project"
printf -- '---\npriority: 1\n---\n# Security\n\nNever commit secrets. Reference credentials through environment variables only.\n' > "$CLAUDE_CONFIG_DIR/rules/security.md"
printf '# Style\n\nPrefer small functions. Run the tests before every commit and push only green builds.\n' > "$CLAUDE_CONFIG_DIR/rules/style.md"
printf '# Global\n\n## Response Style\n\nBe concise. Answer first, then explain.\n' > "$CLAUDE_CONFIG_DIR/CLAUDE.md"

sid="0c5e9a4e-1111-4a2b-9d7e-123456789abc"
common="\"session_id\":\"$sid\",\"transcript_path\":\"$tmp/claude/projects/p/$sid.jsonl\",\"cwd\":\"$tmp/project\",\"permission_mode\":\"default\""
echo "{$common,\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"go test ./...\",\"description\":\"Run the tests\"},\"tool_use_id\":\"toolu_01ABC\",\"effort\":{\"level\":\"medium\"}}" > "$tmp/pre.json"
echo "{$common,\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"Please refactor the parser so that it streams its input, and run the tests afterwards.\"}" > "$tmp/prompt.json"
echo "{$common,\"hook_event_name\":\"SessionStart\",\"source\":\"startup\"}" > "$tmp/start.json"

echo "ccm hook latency, $runs runs per scenario ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
"$tmp/drive" linking "$tmp/ccm"
"$tmp/drive" "$runs" "floor: minimal Go binary" "$tmp/pre.json" - "$tmp/floorbin"
"$tmp/drive" "$runs" "CCM_HOOKS_DISABLED=1 (no-op)" "$tmp/pre.json" CCM_HOOKS_DISABLED=1 "$tmp/ccm" hook PreToolUse
"$tmp/drive" "$runs" "PreToolUse Bash (nothing to do)" "$tmp/pre.json" - "$tmp/ccm" hook PreToolUse
"$tmp/drive" "$runs" "UserPromptSubmit, refresh not due" "$tmp/prompt.json" CONTEXT_REFRESH_INTERVAL=1000000,CONTEXT_REFRESH_CLAUDE_MD_INTERVAL=0 "$tmp/ccm" hook UserPromptSubmit
"$tmp/drive" "$runs" "SessionStart (effort policy)" "$tmp/start.json" - "$tmp/ccm" hook SessionStart
"$tmp/drive" "$runs" "UserPromptSubmit, refresh every prompt" "$tmp/prompt.json" CONTEXT_REFRESH_INTERVAL=1,CONTEXT_REFRESH_CLAUDE_MD_INTERVAL=1 "$tmp/ccm" hook UserPromptSubmit
