package ccm

import (
	"errors"
	"fmt"
	"time"

	"github.com/tidwall/gjson"
)

// Source says where stored content came from. Field names in JSON are
// claude-context-manager's; empty fields are left out.
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

// Meta is a blob's metadata, stored as meta/<hex>.json. It reads what
// claude-context-manager wrote (naive local timestamps, relative session paths, no
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

// naiveLayouts are claude-context-manager's datetime.now().isoformat() forms,
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

// ParseTime reads a metadata timestamp: RFC 3339 with a zone, or
// claude-context-manager's naive local form. The empty string is the zero time.
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
				// claude-context-manager's hooks sometimes stored a non-numeric exit; keep it
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
