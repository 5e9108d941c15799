// Builders of the records purge's tests are made of (prompts, replies,
// thinking, tool calls and results, progress), and small readers of what
// a purge wrote.

package purge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"ccm/ccm/stub"
	"ccm/internal/rawjson"
	"ccm/purge/restore"

	"github.com/tidwall/gjson"
)

// rec is a record line built from fields in order, for hand-written
// fixtures: rec("uuid","u1","parentUuid",nil,...) with values marshalled
// as JSON unless they are json.RawMessage.
func rec(kv ...any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		b.Write(k)
		b.WriteByte(':')
		switch v := kv[i+1].(type) {
		case json.RawMessage:
			b.Write(v)
		case raw:
			b.WriteString(string(v))
		default:
			enc, err := json.Marshal(v)
			if err != nil {
				panic(err)
			}
			b.Write(enc)
		}
	}
	b.WriteByte('}')
	return b.String()
}

// raw is JSON written as is into rec.
type raw string

// Hand-written record shapes (2.0.x style).

func userPrompt(uuid, parent, text string) string {
	return rec("parentUuid", nullable(parent), "isSidechain", false, "type", "user",
		"message", raw(`{"role":"user","content":`+js(text)+`}`), "uuid", uuid, "timestamp", "2025-01-01T00:00:00.000Z")
}

func assistantText(uuid, parent, msgID, text string) string {
	return rec("parentUuid", nullable(parent), "isSidechain", false, "type", "assistant",
		"message", raw(`{"id":`+js(msgID)+`,"role":"assistant","content":[{"type":"text","text":`+js(text)+`}]}`), "uuid", uuid)
}

func assistantThinking(uuid, parent, msgID, thinking, sig string) string {
	return rec("parentUuid", nullable(parent), "isSidechain", false, "type", "assistant",
		"message", raw(`{"id":`+js(msgID)+`,"role":"assistant","content":[{"type":"thinking","thinking":`+js(thinking)+`,"signature":`+js(sig)+`}]}`), "uuid", uuid)
}

func assistantToolUse(uuid, parent, msgID, id, name string, input string) string {
	return rec("parentUuid", nullable(parent), "isSidechain", false, "type", "assistant",
		"message", raw(`{"id":`+js(msgID)+`,"role":"assistant","content":[{"type":"tool_use","id":`+js(id)+`,"name":`+js(name)+`,"input":`+input+`}]}`), "uuid", uuid)
}

func toolResult(uuid, parent, id string, content string, extra ...any) string {
	kv := []any{"parentUuid", nullable(parent), "isSidechain", false, "type", "user",
		"message", raw(`{"role":"user","content":[{"tool_use_id":` + js(id) + `,"type":"tool_result","content":` + content + `}]}`), "uuid", uuid}
	return rec(append(kv, extra...)...)
}

func progress(uuid, parent string) string {
	return rec("parentUuid", nullable(parent), "isSidechain", false, "type", "progress",
		"data", raw(`{"type":"hook_progress","hookEvent":"PostToolUse"}`), "uuid", uuid)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// js encodes a string as JSON with non-ASCII kept raw.
func js(s string) string {
	return string(rawjson.Append(nil, s))
}

// sig is a plausible base64 thinking signature.
const sig = "EqQBCkYIBxgCKkDZm9vYmFyYmF6cXV4cXV1eGZvb2Jhcg=="

// lineOf returns the output line with this uuid (nil when absent).
func lineOf(data []byte, uuid string) []byte {
	return byUUID(data)[uuid]
}

// parentOf returns the parentUuid of the record with this uuid.
func parentOf(t testing.TB, data []byte, uuid string) string {
	t.Helper()
	l := lineOf(data, uuid)
	if l == nil {
		t.Fatalf("no record %s in the output", uuid)
	}
	return gjson.GetBytes(l, "parentUuid").Str
}

// stubsIn returns every stub in a line (decoded strings that are stubs).
func stubsIn(line []byte) []stub.Stub {
	var out []stub.Stub
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		switch {
		case v.IsObject() || v.IsArray():
			v.ForEach(func(_, c gjson.Result) bool { walk(c); return true })
		case v.Type == gjson.String:
			if st, ok := stub.Parse(v.Str); ok {
				out = append(out, st)
			}
		}
	}
	walk(gjson.ParseBytes(line))
	return out
}

// bigText returns n bytes of printable text with line breaks, which JSON
// encodes with
//
//	escapes.
func bigText(seed string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s line %d: lorem ipsum dolor sit amet\n", seed, i)
	}
	return b.String()[:n]
}

type bytesBuffer = bytes.Buffer

// restoreFile restores path with the options of the purge that made it.
func restoreFile(ctx context.Context, path string, o Options) (*restore.Report, error) {
	return restore.File(ctx, path, restoreOptions(o))
}

// restoreBackup brings back a backup with the options of the purge that
// made it.
func restoreBackup(ctx context.Context, path, from string, o Options) (*restore.Report, error) {
	return restore.FromBackup(ctx, path, from, restoreOptions(o))
}

// restoreOptions carries a purge's options over to a restore.
func restoreOptions(o Options) restore.Options {
	return restore.Options{Store: o.Store, LockDir: o.LockDir, LockWait: o.LockWait, DryRun: o.DryRun, Backup: o.Backup, Now: o.Now}
}
