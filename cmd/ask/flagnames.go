package main

import "github.com/urfave/cli/v2"

// urfave/cli's Flag.Names runs a regular expression over each name on every
// call, and running a command calls it about n² times for n flags: once per
// flag to run flag actions, and for each flag not typed, IsSet walks the
// command's flags calling Names on each until it finds it. For ask's main
// command that was about 5,500 of the 7,400 allocations of building the
// tree and parsing a one-shot command line. useStoredNames gives every flag
// a Names that returns the names worked out once. The stored-names types
// embed the flag, so its value, help, visibility and every interface
// urfave/cli asks of it are the flag's own; only a type assertion to the
// concrete type sees another type, and urfave/cli makes those only for a
// bool flag's DisableDefaultText (ask sets none) and in its own shell
// completion and fish script, which ask does not use. They are pointers,
// since urfave/cli compares flags with ==. They are given to the app that
// runs (runCLI): completion, the man page's tests and the other tests read
// the tree as declared.

// useStoredNames gives stored names to the flags of the app about to run:
// the main command's now, and those of the subcommand urfave/cli has
// chosen, with everything under it, in the app's Before, which urfave/cli
// calls after the main command's flags are parsed and before it runs the
// subcommand. A run wraps the flags it parses, not the whole tree.
func useStoredNames(app *cli.App) {
	app.Flags = storedNames(app.Flags)
	before := app.Before
	app.Before = func(c *cli.Context) error {
		// The app's own Before first: it builds the chosen command in
		// full (newRunApp).
		if before != nil {
			if err := before(c); err != nil {
				return err
			}
		}
		if c.Args().Present() {
			if cmd := c.App.Command(c.Args().First()); cmd != nil {
				storeCommandNames(cmd)
			}
		}
		return nil
	}
}

// storeCommandNames wraps the flags of c and of every command under it.
func storeCommandNames(c *cli.Command) {
	c.Flags = storedNames(c.Flags)
	for _, sub := range c.Subcommands {
		storeCommandNames(sub)
	}
}

// storedNames returns flags with each flag of a type ask uses wrapped; the
// others (urfave/cli's shared --help and --version among them) stay.
func storedNames(flags []cli.Flag) []cli.Flag {
	out := make([]cli.Flag, len(flags))
	for i, f := range flags {
		names := namesOf(f)
		switch f := f.(type) {
		case *cli.BoolFlag:
			out[i] = &storedBool{f, names}
		case *cli.StringFlag:
			out[i] = &storedString{f, names}
		case *cli.IntFlag:
			out[i] = &storedInt{f, names}
		case *cli.StringSliceFlag:
			out[i] = &storedStringSlice{f, names}
		case *cli.DurationFlag:
			out[i] = &storedDuration{f, names}
		case *cli.Float64Flag:
			out[i] = &storedFloat64{f, names}
		default:
			out[i] = f
		}
	}
	return out
}

// declared is f as its command declares it: the flag a stored-names
// wrapper holds, else f itself. Code that asks a flag's type (is it a
// switch, a duration?) asks it of declared(f), which sees the same in the
// app that runs as in the tree as declared.
func declared(f cli.Flag) cli.Flag {
	if w, ok := f.(interface{ declared() cli.Flag }); ok {
		return w.declared()
	}
	return f
}

type storedBool struct {
	*cli.BoolFlag
	names []string
}

func (f *storedBool) Names() []string    { return f.names }
func (f *storedBool) declared() cli.Flag { return f.BoolFlag }

type storedString struct {
	*cli.StringFlag
	names []string
}

func (f *storedString) Names() []string    { return f.names }
func (f *storedString) declared() cli.Flag { return f.StringFlag }

type storedInt struct {
	*cli.IntFlag
	names []string
}

func (f *storedInt) Names() []string    { return f.names }
func (f *storedInt) declared() cli.Flag { return f.IntFlag }

type storedStringSlice struct {
	*cli.StringSliceFlag
	names []string
}

func (f *storedStringSlice) Names() []string    { return f.names }
func (f *storedStringSlice) declared() cli.Flag { return f.StringSliceFlag }

type storedDuration struct {
	*cli.DurationFlag
	names []string
}

func (f *storedDuration) Names() []string    { return f.names }
func (f *storedDuration) declared() cli.Flag { return f.DurationFlag }

type storedFloat64 struct {
	*cli.Float64Flag
	names []string
}

func (f *storedFloat64) Names() []string    { return f.names }
func (f *storedFloat64) declared() cli.Flag { return f.Float64Flag }
