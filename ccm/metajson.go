package ccm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// MarshalJSON writes the metadata with claude-context-manager's field order and
// any fields other tools added, kept verbatim.
func (m Meta) MarshalJSON() ([]byte, error) {
	src, err := m.Source.MarshalJSON()
	if err != nil {
		return nil, err
	}
	pin, err := jsonObject([]rawField{
		{"level", jstr(m.Pinned.Level.String())},
		{"reason", jstr(m.Pinned.Reason)},
		{"pinned_at", jstr(FormatTime(m.Pinned.PinnedAt))},
	}, nil)
	if err != nil {
		return nil, err
	}
	return jsonObject([]rawField{
		{"key", jstr(string(m.Key))},
		{"created_at", jstr(FormatTime(m.CreatedAt))},
		{"last_access_at", jstr(FormatTime(m.LastAccessAt))},
		{"access_count", jint(m.AccessCount)},
		{"bytes_uncompressed", jint(m.BytesUncompressed)},
		{"bytes_compressed", jint(m.BytesCompressed)},
		{"lines", jint(m.Lines)},
		{"compression", jstr(m.Compression)},
		{"source", src},
		{"pinned", pin},
	}, m.extra.fields())
}

// UnmarshalJSON reads metadata as a metadata file holds it, including
// claude-context-manager's naive timestamps; the key must be well-formed.
func (m *Meta) UnmarshalJSON(b []byte) error {
	k, err := ParseKey(gjson.GetBytes(b, "key").Str)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadMeta, err)
	}
	v, err := parseMeta(b, k)
	if err != nil {
		return err
	}
	*m = *v
	return nil
}

// MarshalJSON writes the non-empty fields. exit_code is written whenever a
// tool is named, as claude-context-manager did, so "exit 0" stays visible.
func (s Source) MarshalJSON() ([]byte, error) {
	var f []rawField
	add := func(name, v string) {
		if v != "" {
			f = append(f, rawField{name, jstr(v)})
		}
	}
	add("tool_name", s.ToolName)
	if (s.ExitCode != 0 || s.ToolName != "") && !hasField(s.extra.fields(), "exit_code") {
		f = append(f, rawField{"exit_code", jint(int64(s.ExitCode))})
	}
	add("session_path", s.SessionPath)
	add("file_path", s.FilePath)
	add("command", s.Command)
	add("pattern", s.Pattern)
	add("description", s.Description)
	add("cwd", s.Cwd)
	add("media_type", s.MediaType)
	add("type", s.Type)
	return jsonObject(f, s.extra.fields())
}

// encodeMeta returns the file content for m: indented like
// claude-context-manager's json.dumps(meta, indent=2), plus a final newline.
func encodeMeta(m *Meta) ([]byte, error) {
	compact, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// jsonObject writes known fields in order, then extra fields not among
// them, sorted by name.
func jsonObject(known, extra []rawField) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	seen := make(map[string]bool, len(known))
	for i, f := range known {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(jstr(f.name))
		buf.WriteByte(':')
		buf.Write(f.raw)
		seen[f.name] = true
	}
	ex := append([]rawField(nil), extra...)
	sort.SliceStable(ex, func(i, j int) bool { return ex[i].name < ex[j].name })
	for _, f := range ex {
		if seen[f.name] || !json.Valid(f.raw) {
			continue
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		buf.Write(jstr(f.name))
		buf.WriteByte(':')
		buf.Write(f.raw)
		seen[f.name] = true
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// jstr encodes a JSON string without HTML escaping, so commands with < > &
// stay readable in the file.
func jstr(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func hasField(fs []rawField, name string) bool {
	for _, f := range fs {
		if f.name == name {
			return true
		}
	}
	return false
}

func jint(n int64) []byte { return []byte(fmt.Sprint(n)) }

// Tool returns a short name for where the content came from, for listings.
func (s Source) Tool() string {
	switch {
	case s.ToolName != "":
		return s.ToolName
	case s.Type != "":
		return s.Type
	}
	return "unknown"
}

// Summary returns one line describing the source, as the stub's "source:"
// line shows it: the tool and the file, or the command cut to 80
// characters.
func (s Source) Summary() string {
	parts := []string{}
	if s.ToolName != "" {
		parts = append(parts, s.ToolName)
	} else if s.Type == "image" {
		mt := strings.TrimPrefix(s.MediaType, "image/")
		return fmt.Sprintf("Image (%s)", strings.ToUpper(mt))
	}
	switch {
	case s.FilePath != "":
		parts = append(parts, s.FilePath)
	case s.Command != "":
		parts = append(parts, cut(s.Command, 80))
	case s.Pattern != "":
		parts = append(parts, s.Pattern)
	case s.Description != "":
		parts = append(parts, cut(s.Description, 80))
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return oneLine(strings.Join(parts, " "))
}

// cut shortens s to n runes plus "...".
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

// oneLine turns line breaks into spaces so a value cannot break a stub or a
// listing into several lines.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s)
}
