package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/skills"
	"github.com/ask-cli/ask/internal/table"
	"github.com/ask-cli/ask/internal/termtext"
)

// skillsCommand is `ask skills list|show`: the skills a run here would
// find (DESIGN §9, Skills).
func skillsCommand(stdio *IO) *cli.Command {
	jsonFlag := &cli.BoolFlag{Name: "json", Usage: "print JSON even on a terminal"}
	return &cli.Command{
		Name:            "skills",
		Action:          subcommandAction,
		Usage:           "the Agent Skills (SKILL.md) a run here finds: list them, show one",
		UsageText:       "ask skills list|show [--json] [NAME]",
		HideHelpCommand: true,
		Subcommands: []*cli.Command{
			{
				Name:   "list",
				Usage:  "list the skills a run in --workdir finds, the first of each name, in the order they are looked for",
				Flags:  []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error { return skillsList(c, stdio) },
			},
			{
				Name:      "show",
				Usage:     "print one skill: what the skill tool returns (its instructions and files), or JSON with --json or in a pipe",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{jsonFlag},
				Action:    func(c *cli.Context) error { return skillsShow(c, stdio) },
			},
		},
	}
}

// foundSkills are the skills a run of c's flags would find; the bad ones
// are warned of on stderr.
func foundSkills(c *cli.Context, stdio *IO) ([]skills.Skill, error) {
	s, err := resolve(c, stdio)
	if err != nil {
		return nil, err
	}
	found, warnings := run.FindSkills(s, run.Env{Getenv: stdio.Getenv, Wd: stdio.Wd})
	if !c.Bool("quiet") {
		for _, w := range warnings {
			fmt.Fprintf(stdio.Err, "ask: warning: %s\n", termtext.Safe(w))
		}
	}
	return found, nil
}

func skillsList(c *cli.Context, stdio *IO) error {
	if c.NArg() > 0 {
		return usageErr("skills list takes no arguments (ask skills show NAME shows one skill)")
	}
	found, err := foundSkills(c, stdio)
	if err != nil {
		return err
	}
	if stdio.OutTTY && !c.Bool("json") {
		var rows [][]string
		for _, s := range found {
			rows = append(rows, []string{s.Name, termtext.Safe(termtext.Shorten(s.Description, 60)),
				table.OrDash(termtext.Safe(strings.Join(s.AllowedTools, " "))), termtext.Safe(s.Dir)})
		}
		return table.Print(stdio.Out, []string{"NAME", "DESCRIPTION", "ALLOWED TOOLS", "FOLDER"}, rows...)
	}
	if found == nil {
		found = []skills.Skill{}
	}
	return writeStageValue(stdio, found)
}

func skillsShow(c *cli.Context, stdio *IO) error {
	if c.NArg() != 1 {
		return usageErr("skills show takes one skill name (ask skills list shows them)")
	}
	found, err := foundSkills(c, stdio)
	if err != nil {
		return err
	}
	name := c.Args().First()
	s, ok := skills.Lookup(found, name)
	if !ok {
		if len(found) == 0 {
			return usageErr("no skill %q: none is found here (see ask skills list)", name)
		}
		return usageErr("no skill %q: choose one of %s", name, strings.Join(skills.Names(found), ", "))
	}
	files, err := skills.Files(s)
	if err != nil {
		return err
	}
	if stdio.OutTTY && !c.Bool("json") {
		_, err := fmt.Fprintln(stdio.Out, termtext.SafeLines(skills.Render(s, files)))
		return err
	}
	return writeStageValue(stdio, struct {
		skills.Skill
		Body  string   `json:"body"`
		Files []string `json:"files"`
	}{s, s.Body, nonNilStrings(files)})
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
