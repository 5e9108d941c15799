package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"ccm/hooklib/install"
)

func newUninstallCommand() *cli.Command {
	return &cli.Command{
		Name:  "uninstall",
		Usage: "remove what ccm install added",
		Description: `Removes ccm's hook registrations from the scope's settings.json (and the keys
install created for them), and the slash commands install wrote that are
unchanged since. Your own hooks and every other key keep their bytes: after
install and uninstall the file is what it was. The file is backed up first.

` + exitStatusHelp,
		Flags: installFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return runUninstall(ctx, installOptionsFrom(cmd))
		},
	}
}

func runUninstall(_ context.Context, o installOptions) error {
	lo, err := o.libOptions()
	if err != nil {
		return err
	}
	r, err := install.Uninstall(lo)
	if err != nil {
		return err
	}
	return reportInstall(o, r, "ccm is not installed in "+r.Settings)
}
