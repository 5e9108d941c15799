package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode"
	"unicode/utf8"

	"ccm/ccm"
	"ccm/ccm/stub"
	"ccm/internal/rawjson"
	"ccm/internal/ui"

	"github.com/urfave/cli/v3"
)

type cacheGetOptions struct {
	globalOptions
	Key    string
	Last   bool
	Info   bool
	Raw    bool        // the stored bytes, a purge's JSON value as JSON
	Select *lineSelect // nil or inactive: the whole content
}

func newCacheGetCommand() *cli.Command {
	return &cli.Command{
		Name:      "get",
		Usage:     "write stored content to stdout (--info: its metadata)",
		ArgsUsage: "KEY",
		Description: `Writes the content stored under KEY (sha256:<64 hex>, or a legacy b2s:<16 hex>)
to stdout, after checking it against its key: corrupt content is reported
and never written. The access time and count are updated. --info prints the
metadata instead and counts no access. --last uses the most recently stored key.

ccm purge stores what it cuts out of a transcript as the JSON value it was
in the line. A JSON string (a tool's output, a file read) is written as the
text it encodes, so its lines are the lines the stub's "lines:" counts; so
is an array of text blocks (a Task's answer), written as the texts of its
blocks, a newline between two. Any other JSON object or array (a
toolUseResult, image and text blocks) is written as stored. --raw writes the stored bytes exactly, the string as JSON too.
What the hooks capture is stored as text and written as it is either way.

Parts of the content (lines are numbered from 1, as in a stub):
  --lines A:B   lines A to B, inclusive (A: to the end, :B from the start)
  --head N      the first N lines
  --tail N      the last N lines
  --grep RE     the lines matching the regular expression RE, each prefixed
                with its number and ':' (exit 1 when none matches)
The lines are written byte for byte. A malformed range, or one that starts
after the last line, is an error (exit 2).

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "info", Usage: "print the metadata instead of the content"},
			&cli.BoolFlag{Name: "last", Usage: "use the most recently stored key"},
			&cli.BoolFlag{Name: "raw", Usage: "write the stored bytes exactly (a purged JSON string as JSON, not its text)"},
			&cli.StringFlag{Name: "lines", Usage: "only lines `A:B` (1-based, inclusive)"},
			&cli.IntFlag{Name: "head", Usage: "only the first `N` lines"},
			&cli.IntFlag{Name: "tail", Usage: "only the last `N` lines"},
			&cli.StringFlag{Name: "grep", Usage: "only the lines matching `REGEX`, numbered"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usagef("get takes one KEY")
			}
			sel, err := parseLineSelect(cmd.String("lines"), cmd.String("grep"), cmd.Int("head"), cmd.Int("tail"),
				cmd.IsSet("head"), cmd.IsSet("tail"))
			if err != nil {
				return err
			}
			if sel.active() && cmd.Bool("info") {
				return usagef("--info prints metadata; it takes no line selection")
			}
			if cmd.Bool("raw") && cmd.Bool("info") {
				return usagef("--info prints metadata; --raw goes with the content")
			}
			return runCacheGet(ctx, cacheGetOptions{globalOptions: globals(cmd), Key: cmd.Args().First(),
				Last: cmd.Bool("last"), Info: cmd.Bool("info"), Raw: cmd.Bool("raw"), Select: sel})
		},
	}
}

// resolveKey returns the key named on the command line or, with last, the
// most recently stored one.
func resolveKey(st *ccm.Store, arg string, last bool) (ccm.Key, error) {
	switch {
	case last && arg != "":
		return "", usagef("give a KEY or --last, not both")
	case last:
		return st.LastKey()
	case arg == "":
		return "", usagef("missing KEY (or --last)")
	}
	return parseKeyArg(arg)
}

func runCacheGet(ctx context.Context, o cacheGetOptions) error {
	st, err := openStore(o.globalOptions)
	if err != nil {
		return err
	}
	k, err := resolveKey(st, o.Key, o.Last)
	if err != nil {
		return err
	}
	if o.Info {
		m, err := st.Stat(k)
		if err != nil {
			return err
		}
		return printMeta(o.globalOptions, m)
	}
	m, err := st.Stat(k)
	if err != nil {
		return err
	}
	asText := !o.Raw && m.Source.Type == stub.RawValueType
	if m.BytesUncompressed <= maxInMemoryGet {
		b, err := st.Get(ctx, k)
		if err != nil {
			return err
		}
		if asText {
			// Decoded whole before a byte is written, as the content is
			// checked whole.
			if b, err = jsonText(k, b); err != nil {
				return err
			}
		}
		return writeContent(o, k, bytes.NewReader(b))
	}
	if o.JSON {
		return fmt.Errorf("%s: %s is too large for --json; write it without --json", k, ui.Bytes(m.BytesUncompressed))
	}
	if err := st.Verify(k); err != nil {
		return err
	}
	rc, _, err := st.Open(ctx, k)
	if err != nil {
		return err
	}
	defer rc.Close()
	var r io.Reader = rc
	if asText {
		tr := newJSONTextReader(k, rc)
		defer tr.Close()
		r = tr
	}
	return writeContent(o, k, r)
}

// writeContent writes the content, or the lines selected of it, to
// stdout; under --json as {"key", "text"} (or "base64" for bytes that are
// not UTF-8), what would be written without --json.
func writeContent(o cacheGetOptions, k ccm.Key, r io.Reader) error {
	w := o.Stdout
	var buf bytes.Buffer
	if o.JSON {
		w = &buf
	}
	var err error
	if o.Select.active() {
		err = o.Select.write(w, r)
	} else {
		_, err = io.Copy(w, r)
	}
	if !o.JSON || (err != nil && !errors.Is(err, errFindings) && !isSilent(err)) {
		return err
	}
	out := map[string]any{"key": k}
	if utf8.Valid(buf.Bytes()) {
		out["text"] = buf.String()
	} else {
		out["base64"] = buf.Bytes() // encoding/json writes []byte as base64
	}
	if werr := writeJSON(o.Stdout, out); werr != nil {
		return werr
	}
	return err
}

// isSilent reports whether err carries an exit status only.
func isSilent(err error) bool {
	var se silentError
	return errors.As(err, &se)
}

// jsonText is the text of a stored JSON value, as a stub's lines: count
// it (stub.ValueText): a string decoded, an array of text blocks as the
// texts of its blocks; any other value (an object, an array of other
// blocks) is returned as it is.
func jsonText(k ccm.Key, b []byte) ([]byte, error) {
	i := bytes.IndexFunc(b, func(r rune) bool { return !unicode.IsSpace(r) })
	if i < 0 || b[i] != '"' && b[i] != '[' {
		return b, nil
	}
	text, ok := stub.ValueText(b)
	switch {
	case ok:
		return text, nil
	case b[i] == '"':
		return nil, fmt.Errorf("%s: %w (--raw writes it as stored)", k, rawjson.ErrNotString)
	}
	return b, nil
}

// jsonTextReader decodes a stored JSON string as it is read, for content
// too large to hold: jsonText in bounded memory.
type jsonTextReader struct {
	*io.PipeReader
}

func newJSONTextReader(k ccm.Key, r io.Reader) *jsonTextReader {
	br := bufio.NewReader(r)
	pr, pw := io.Pipe()
	go func() {
		first, err := br.Peek(1)
		switch {
		case err != nil:
			pw.CloseWithError(err)
		case first[0] != '"':
			_, err := io.Copy(pw, br)
			pw.CloseWithError(err)
		default:
			if err := rawjson.UnquoteTo(pw, br); errors.Is(err, rawjson.ErrNotString) {
				pw.CloseWithError(fmt.Errorf("%s: %w (--raw writes it as stored)", k, err))
			} else {
				pw.CloseWithError(err)
			}
		}
	}()
	return &jsonTextReader{pr}
}

// printMeta prints a blob's metadata: JSON as stored with --json, else
// one field per line.
func printMeta(g globalOptions, m *ccm.Meta) error {
	if g.JSON {
		b, err := m.MarshalJSON()
		if err != nil {
			return err
		}
		return writeJSON(g.Stdout, rawJSON(b))
	}
	w := g.Stdout
	fmt.Fprintf(w, "key:          %s\n", m.Key)
	fmt.Fprintf(w, "created:      %s\n", fmtTime(m.CreatedAt))
	fmt.Fprintf(w, "last access:  %s\n", fmtTime(m.LastAccessAt))
	fmt.Fprintf(w, "accesses:     %d\n", m.AccessCount)
	fmt.Fprintf(w, "size:         %s bytes, %s lines\n", ui.Count(m.BytesUncompressed), ui.Count(m.Lines))
	if m.BytesCompressed > 0 {
		fmt.Fprintf(w, "on disk:      %s bytes, %s\n", ui.Count(m.BytesCompressed), m.Compression)
	} else {
		fmt.Fprintf(w, "on disk:      %s\n", m.Compression)
	}
	fmt.Fprintf(w, "source:       %s\n", m.Source.Summary())
	s := m.Source
	for _, f := range [][2]string{{"tool", s.ToolName}, {"command", s.Command}, {"file", s.FilePath}, {"pattern", s.Pattern},
		{"description", s.Description}, {"session", s.SessionPath}, {"cwd", s.Cwd}, {"media type", s.MediaType}} {
		if f[1] != "" {
			fmt.Fprintf(w, "  %-14s%s\n", f[0]+":", f[1])
		}
	}
	if s.ToolName != "" || s.ExitCode != 0 {
		fmt.Fprintf(w, "  %-14s%d\n", "exit code:", s.ExitCode)
	}
	if s.Type == stub.RawValueType {
		fmt.Fprintf(w, "  %-14s%s\n", "stored as:", "the JSON value a purge cut out (cache get writes a string's text, --raw the JSON)")
	}
	if m.Pinned.Level == ccm.PinNone {
		fmt.Fprintf(w, "pinned:       none\n")
	} else {
		fmt.Fprintf(w, "pinned:       %s since %s", m.Pinned.Level, fmtTime(m.Pinned.PinnedAt))
		if m.Pinned.Reason != "" {
			fmt.Fprintf(w, " (%s)", m.Pinned.Reason)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// rawJSON lets writeJSON indent JSON that is already encoded.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05 -0700")
}

// maxInMemoryGet is the size up to which "ccm cache get" reads the content
// whole and verifies it before writing a byte. Larger content is verified
// in a first pass and streamed in a second, so corrupt content is never
// written either way.
var maxInMemoryGet int64 = 256 << 20 // a variable for the tests of the streamed path
