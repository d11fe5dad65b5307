package main

import (
	"github.com/urfave/cli/v2"
)

// requestOnlyFlags are the main command's flags about output, which mean
// nothing to `ask provider request` since it sends nothing.
var requestOnlyFlags = map[string]bool{"json": true, "events": true, "transcript": true}

func providerRequestCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "request",
		Usage:     "print the request body the loop would send for its first step; nothing is sent",
		ArgsUsage: "[flags] PROMPT...",
		Description: "The flags are the main command's and mean the same: provider, model, mode, --safe,\n" +
			"tools, system prompt, --max-tokens, --schema, --tool-protocol. No key is needed.",
		Flags:  flagsExcept(runFlags(stdio), requestOnlyFlags),
		Action: func(c *cli.Context) error { return providerRequest(c, stdio) },
	}
}

// flagsExcept drops the flags named in skip.
func flagsExcept(flags []cli.Flag, skip map[string]bool) []cli.Flag {
	var out []cli.Flag
	for _, f := range flags {
		if !skip[flagName(f)] {
			out = append(out, f)
		}
	}
	return out
}

// providerRequest prints the first request of the run the flags describe:
// the same run the main command would build (prepareRun), the prompt as
// the last user message after any earlier conversation.
func providerRequest(c *cli.Context, stdio *IO) error {
	if err := flagAfterArgs(c); err != nil {
		return err
	}
	r, prompt, err := prepareRun(c, stdio, statusFor(stdio, true), true)
	if err != nil {
		return err
	}
	defer r.Close()
	body, err := r.FirstRequest(prompt)
	if err != nil {
		return err
	}
	return writeStageJSON(stdio, body)
}
