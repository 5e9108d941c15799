// Package commands embeds ccm's Claude Code slash commands (/ccm, /purge,
// /pin-last, /pin-next, /pin-start, /pin-end) so that `ccm install` works
// from an installed binary, without a checkout. In the files, {{CCM}}
// stands for how the command should call ccm; install fills it in.
package commands

import "embed"

// FS holds the *.md command files of this folder.
//
//go:embed *.md
var FS embed.FS
