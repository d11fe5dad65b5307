package main

import "github.com/urfave/cli/v2"

// newRunApp is newApp for a run: the main command in full, and each
// subcommand in outline until urfave/cli chooses one, which is then built in
// full. Most subcommands take the main command's flags (runFlags), and
// building every command's copy of them was most of the cost of building the
// tree, which every one-shot answer paid for commands it does not run.
//
// An outline is the command as its constructor builds it from an IO marked
// outline, for which runFlags is empty: it has the command's names, usage
// and place in --help, all that the main command's help and urfave/cli's
// lookup of a command by name read. fill builds the command named in full,
// in place of its outline, and returns it (nil for a name no command has):
// a run calls it for the command its command line names, whose flags it
// reads before urfave/cli does (reorderArgs). The app's Before, which
// urfave/cli calls after parsing the main command's flags and before it
// runs the subcommand, fills the command chosen too. Nothing depends on a
// constructor using runFlags: one that does not is built the same both
// times.
func newRunApp(stdio *IO) (app *cli.App, fill func(name string) *cli.Command) {
	outline := *stdio
	outline.outline = true
	builders := map[*cli.Command]func(*IO) *cli.Command{}
	app = appWith(stdio, func(build func(*IO) *cli.Command) *cli.Command {
		c := build(&outline)
		builders[c] = build
		return c
	})
	fill = func(name string) *cli.Command {
		cmd := app.Command(name)
		build := builders[cmd]
		if build == nil {
			return cmd
		}
		full := build(stdio)
		setUsageError(full, "ask "+full.Name)
		addCommandExamples(full, "ask")
		// The outline's HelpName ("ask tools"), set by urfave/cli's Setup
		// when the app runs, is the one field of a top-level command Setup
		// sets that the full command needs once the app has started (the
		// others it recomputes or ask leaves at their zero values: flag
		// categories, the slice separator). Before the app runs it is
		// empty, and Setup sets the full command's.
		full.HelpName = cmd.HelpName
		*cmd = *full
		delete(builders, cmd)
		return cmd
	}
	app.Before = func(c *cli.Context) error {
		if c.Args().Present() {
			fill(c.Args().First())
		}
		return nil
	}
	return app, fill
}
