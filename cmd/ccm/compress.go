package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"ccm/hooklib"
	"ccm/hooklib/compress"
)

// compressOptions are the inputs of ccm compress.
type compressOptions struct {
	globalOptions
	Level string // "" for CONTEXT_REFRESH_COMPRESSION
	Stats bool
	File  string // "" or "-" for stdin
}

func newCompressCommand() *cli.Command {
	return &cli.Command{
		Name:      "compress",
		Usage:     "compress text the way context refresh does",
		ArgsUsage: "[FILE|-]",
		Description: `Runs the compression preprocessor on FILE (or stdin) and prints the result.

  off         no change
  light       markdown formatting removed (headers, tables, emphasis, rules,
              mermaid diagrams)
  standard    plus filler words and the abbreviation dictionary
  aggressive  plus vowels inside long words

Code, quotes, URLs, paths, identifiers, numbers, negations, action verbs and
direction words are never changed. Abbreviations and vowel removal apply
only where they save cl100k tokens, and no level returns more tokens than
its input. The level defaults to CONTEXT_REFRESH_COMPRESSION; the dictionary
takes CONTEXT_REFRESH_ABBREV_FILE into account. --stats prints characters and
cl100k tokens before and after to stderr.

` + exitStatusHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "level", Usage: "off, light, standard or aggressive"},
			&cli.BoolFlag{Name: "stats", Usage: "print characters and tokens before and after to stderr"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usagef("compress takes one FILE or - (see ccm compress --help)")
			}
			return runCompress(ctx, compressOptions{globalOptions: globals(cmd), Level: cmd.String("level"), Stats: cmd.Bool("stats"), File: cmd.Args().First()})
		},
	}
}

// maxCompressInput bounds what ccm compress reads; it is meant for rules
// and instruction files, not transcripts.
const maxCompressInput = 64 << 20

func runCompress(_ context.Context, o compressOptions) error {
	cfg := hooklib.LoadConfig(o.ClaudeDir, os.LookupEnv)
	name := o.Level
	if name == "" {
		name = cfg.String("CONTEXT_REFRESH_COMPRESSION")
	}
	level, ok := compress.ParseLevel(name)
	if !ok {
		if o.Level != "" {
			return usagef("unknown level %q (want off, light, standard or aggressive)", o.Level)
		}
		return fmt.Errorf("CONTEXT_REFRESH_COMPRESSION=%q is not off, light, standard or aggressive", name)
	}
	dict, err := compress.LoadDict(cfg.Path("CONTEXT_REFRESH_ABBREV_FILE"))
	if err != nil {
		return err
	}
	in, err := readCompressInput(o.Stdin, o.File)
	if err != nil {
		return err
	}
	r := compress.New(compress.Options{Level: level, Dict: dict}).Compress(in)
	if r.Err != nil {
		return r.Err
	}
	if level == compress.Off && (o.Stats || o.JSON) {
		n := compress.CL100K().Count(in)
		r.TokensIn, r.TokensOut = n, n
	}
	if o.JSON {
		return writeJSON(o.Stdout, map[string]any{
			"level": level.String(), "level_used": r.Level.String(),
			"chars_before": len([]rune(in)), "chars_after": len([]rune(r.Text)),
			"tokens_before": r.TokensIn, "tokens_after": r.TokensOut, "text": r.Text,
		})
	}
	if _, err := io.WriteString(o.Stdout, r.Text); err != nil {
		return err
	}
	if o.Stats {
		fmt.Fprintln(o.Stderr, compress.Stats(in, r))
	}
	return nil
}

func readCompressInput(stdin io.Reader, file string) (string, error) {
	var r io.Reader = stdin
	name := "stdin"
	if file != "" && file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r, name = f, file
	}
	data, err := io.ReadAll(io.LimitReader(r, maxCompressInput+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > maxCompressInput {
		return "", fmt.Errorf("%s: larger than %d MiB", name, maxCompressInput>>20)
	}
	return string(data), nil
}
