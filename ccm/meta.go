package ccm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Source says where stored content came from. Field names in JSON are the
// Python tool's; empty fields are left out.
type Source struct {
	ToolName    string `json:"tool_name,omitempty"`
	ExitCode    int    `json:"exit_code,omitempty"`
	SessionPath string `json:"session_path,omitempty"` // absolute for everything ccm stores
	FilePath    string `json:"file_path,omitempty"`
	Command     string `json:"command,omitempty"`
	Pattern     string `json:"pattern,omitempty"`
	Description string `json:"description,omitempty"`
	Cwd         string `json:"cwd,omitempty"`
	MediaType   string `json:"media_type,omitempty"` // images
	Type        string `json:"type,omitempty"`       // "image" for images

	extra extras // fields written by other tools, kept on rewrite
}

// PinInfo is the pin recorded in a blob's metadata.
type PinInfo struct {
	Level    PinLevel  `json:"level"`
	Reason   string    `json:"reason"`
	PinnedAt time.Time `json:"pinned_at"` // zero when unpinned
}

// Meta is a blob's metadata, stored as meta/<hex>.json. It reads what the
// Python tool wrote (naive local timestamps, relative session paths, no
// bytes_compressed) and writes the same field names, with RFC 3339
// timestamps that carry their zone.
type Meta struct {
	Key               Key       `json:"key"`
	CreatedAt         time.Time `json:"created_at"`
	LastAccessAt      time.Time `json:"last_access_at"`
	AccessCount       int64     `json:"access_count"` // retrievals; storing again does not count
	BytesUncompressed int64     `json:"bytes_uncompressed"`
	BytesCompressed   int64     `json:"bytes_compressed"` // size of the blob file; 0 when unknown
	Lines             int64     `json:"lines"`            // number of '\n'
	Compression       string    `json:"compression"`      // zstd, gzip or none
	Source            Source    `json:"source"`
	Pinned            PinInfo   `json:"pinned"`

	extra extras // top-level fields written by other tools, kept on rewrite
}

// rawField is a JSON member this package does not know, kept verbatim.
type rawField struct {
	name string
	raw  []byte
}

// extras holds the members of a JSON object that this package does not
// know, as a compact JSON object. A string rather than a slice keeps
// Source and Meta comparable with ==.
type extras string

func (e *extras) add(name, raw string) {
	member := string(jstr(name)) + ":" + raw
	if *e == "" {
		*e = extras("{" + member + "}")
		return
	}
	*e = extras(string((*e)[:len(*e)-1]) + "," + member + "}")
}

func (e extras) fields() []rawField {
	if e == "" {
		return nil
	}
	var out []rawField
	gjson.Parse(string(e)).ForEach(func(k, v gjson.Result) bool {
		out = append(out, rawField{k.Str, []byte(v.Raw)})
		return true
	})
	return out
}

// ErrBadMeta marks a metadata file that cannot be used: not JSON, wrong
// types, an invalid key or pin level.
var ErrBadMeta = errors.New("invalid metadata")

// timeLayout is written: RFC 3339 with microseconds and a numeric zone,
// which Python's datetime.fromisoformat also reads.
const timeLayout = "2006-01-02T15:04:05.000000-07:00"

// naiveLayouts are the Python tool's datetime.now().isoformat() forms,
// read as local time.
var naiveLayouts = []string{
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
}

// FormatTime formats t as metadata timestamps are written.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(timeLayout)
}

// ParseTime reads a metadata timestamp: RFC 3339 with a zone, or the Python
// tool's naive local form. The empty string is the zero time.
func ParseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02 15:04:05.999999999Z07:00", s); err == nil {
		return t, nil
	}
	for _, l := range naiveLayouts {
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid timestamp %s", quoteShort(s))
}

// parseMeta decodes a metadata file. want is the key its file name says;
// a file whose "key" names another blob (or a path) is rejected, so a
// planted metadata file cannot redirect an operation elsewhere.
func parseMeta(b []byte, want Key) (*Meta, error) {
	if !gjson.ValidBytes(b) {
		return nil, fmt.Errorf("%w: not JSON", ErrBadMeta)
	}
	root := gjson.ParseBytes(b)
	if !root.IsObject() {
		return nil, fmt.Errorf("%w: not a JSON object", ErrBadMeta)
	}
	m := &Meta{Key: want}
	var err error
	root.ForEach(func(k, v gjson.Result) bool {
		err = m.setField(k.Str, v)
		return err == nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadMeta, err)
	}
	return m, nil
}

func (m *Meta) setField(name string, v gjson.Result) error {
	var err error
	switch name {
	case "key":
		if v.Type != gjson.String {
			return fmt.Errorf("key is not a string")
		}
		k, err := ParseKey(v.Str)
		if err != nil {
			return err
		}
		if k != m.Key {
			return fmt.Errorf("key %s does not match the file name (%s)", quoteShort(v.Str), m.Key)
		}
	case "created_at":
		m.CreatedAt, err = jsonTime(name, v)
	case "last_access_at":
		m.LastAccessAt, err = jsonTime(name, v)
	case "access_count":
		m.AccessCount, err = jsonCount(name, v)
	case "bytes_uncompressed":
		m.BytesUncompressed, err = jsonCount(name, v)
	case "bytes_compressed":
		m.BytesCompressed, err = jsonCount(name, v)
	case "lines":
		m.Lines, err = jsonCount(name, v)
	case "compression":
		m.Compression, err = jsonString(name, v)
	case "source":
		err = m.Source.set(v)
	case "pinned":
		err = m.Pinned.set(v)
	default:
		m.extra.add(name, v.Raw)
	}
	return err
}

func (s *Source) set(v gjson.Result) error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		return fmt.Errorf("source is not an object")
	}
	var err error
	v.ForEach(func(k, f gjson.Result) bool {
		name := k.Str
		switch name {
		case "tool_name":
			s.ToolName, err = jsonString(name, f)
		case "exit_code":
			if f.Type != gjson.Number {
				// The Python hooks sometimes stored a non-numeric exit; keep it
				// verbatim rather than reject the whole file.
				s.extra.add(name, f.Raw)
				return true
			}
			s.ExitCode = int(f.Int())
		case "session_path":
			s.SessionPath, err = jsonString(name, f)
		case "file_path":
			s.FilePath, err = jsonString(name, f)
		case "command":
			s.Command, err = jsonString(name, f)
		case "pattern":
			s.Pattern, err = jsonString(name, f)
		case "description":
			s.Description, err = jsonString(name, f)
		case "cwd":
			s.Cwd, err = jsonString(name, f)
		case "media_type":
			s.MediaType, err = jsonString(name, f)
		case "type":
			s.Type, err = jsonString(name, f)
		default:
			s.extra.add(name, f.Raw)
		}
		return err == nil
	})
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	return nil
}

func (p *PinInfo) set(v gjson.Result) error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		return fmt.Errorf("pinned is not an object")
	}
	var err error
	v.ForEach(func(k, f gjson.Result) bool {
		switch k.Str {
		case "level":
			var s string
			if s, err = jsonString("pinned.level", f); err == nil {
				p.Level, err = ParsePinLevel(s)
			}
		case "reason":
			p.Reason, err = jsonString("pinned.reason", f)
		case "pinned_at":
			p.PinnedAt, err = jsonTime("pinned.pinned_at", f)
		}
		return err == nil
	})
	return err
}

func jsonString(name string, v gjson.Result) (string, error) {
	switch v.Type {
	case gjson.String:
		return v.Str, nil
	case gjson.Null:
		return "", nil
	}
	return "", fmt.Errorf("%s is not a string", name)
}

func jsonCount(name string, v gjson.Result) (int64, error) {
	if v.Type == gjson.Null {
		return 0, nil
	}
	if v.Type != gjson.Number || v.Num < 0 || v.Num != float64(int64(v.Num)) {
		return 0, fmt.Errorf("%s is not a non-negative integer", name)
	}
	return v.Int(), nil
}

func jsonTime(name string, v gjson.Result) (time.Time, error) {
	s, err := jsonString(name, v)
	if err != nil {
		return time.Time{}, err
	}
	t, err := ParseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// MarshalJSON writes the metadata with the Python tool's field order and
// any fields other tools added, kept verbatim.
func (m *Meta) MarshalJSON() ([]byte, error) {
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

// MarshalJSON writes the non-empty fields. exit_code is written whenever a
// tool is named, as the Python tool did, so "exit 0" stays visible.
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

// encodeMeta returns the file content for m: indented like the Python
// tool's json.dumps(meta, indent=2), plus a final newline.
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
