package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v3"

	"ccm/ccm"
)

func newCacheCommand() *cli.Command {
	return &cli.Command{
		Name:  "cache",
		Usage: "store, read and list content in the CCM store",
		Description: `The CCM store keeps the content purge and the hooks remove from transcripts,
by sha256 key. Its directory is --cache-dir, $CCM_CACHE_DIR, or
<claude dir>/cache/ccm.

` + exitStatusHelp,
		Commands: []*cli.Command{
			newCachePutCommand(),
			newCacheGetCommand(),
			newCacheLastCommand(),
			newCacheLsCommand(),
			newCacheStatsCommand(),
			newCacheVerifyCommand(),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("unknown command %q (see ccm cache --help)", cmd.Args().First())
			}
			return cli.ShowSubcommandHelp(cmd)
		},
	}
}

// openStore opens the store the global flags name.
func openStore(g globalOptions) (*ccm.Store, error) {
	return ccm.Open(storeRoot(g))
}

// parseKeyArg validates a key given on the command line: a usage error
// for anything that is not a well-formed key.
func parseKeyArg(s string) (ccm.Key, error) {
	k, err := ccm.ParseKey(strings.TrimSpace(s))
	if err != nil {
		return "", usageError{msg: err.Error()}
	}
	return k, nil
}

// ---- put
