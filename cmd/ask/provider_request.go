package main

import (
	"github.com/urfave/cli/v2"
)

func providerRequestCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "request",
		Usage:     "print the request body the loop would send for its first step; nothing is sent",
		ArgsUsage: "[flags] PROMPT...",
		Description: "The flags are the main command's and mean the same (see ask --help): provider, model, mode,\n" +
			"--safe, tools, system prompt, --max-tokens, --schema, --tool-protocol. No key is needed.",
		Action: func(c *cli.Context) error { return providerRequest(c, stdio) },
	}
}

// providerRequest prints the first request of the run the flags describe:
// the same run the main command would build (prepareRun), the prompt as
// the last user message after any earlier conversation.
func providerRequest(c *cli.Context, stdio *IO) error {
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
