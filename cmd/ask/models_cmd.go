package main

import (
	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/table"
)

// modelsCommand is `ask models`: the models the provider offers now, from
// its own listing endpoint.
func modelsCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "models",
		Usage:     "list the models the provider offers now, from its own listing endpoint",
		UsageText: "ask models [-p PROVIDER] [--base-url URL] [--json]",
		Description: `Asks the provider (chosen as for a run: -p, $ASK_PROVIDER, the config file,
the first provider whose key is set) for its models: GET /models for OpenAI
and the Chat Completions family (OpenRouter adds context length, tool support
and prices), /v1/models for Anthropic, /v1beta/models for Gemini (only those
that take generateContent), /api/tags for Ollama (the models pulled there).

On a terminal a table; in a pipe, or with --json, a JSON array of
{"id", "name", "context_length", "max_output_tokens", "tools", "input_price",
"output_price", "created", "owned_by", "size"}, where a field the provider does
not report is left out, and prices are US dollars per million tokens.
The config file's aliases (ask config) name models for --model.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON even on a terminal"},
		},
		Action: func(c *cli.Context) error { return modelsAction(c, stdio) },
	}
}

func modelsAction(c *cli.Context, stdio *IO) error {
	if c.NArg() > 0 {
		return usageErr("models takes no arguments, got %q (name the provider with -p)", c.Args().First())
	}
	s, err := resolve(c, stdio)
	if err != nil {
		return err
	}
	stdio.redactor.Add(s.Key.Value.Reveal())
	models, err := run.ListModels(c.Context, s, run.Env{Getenv: stdio.Getenv, HTTP: stdio.HTTP})
	if err != nil {
		return err
	}
	if stdio.OutTTY && !c.Bool("json") {
		return table.Models(stdio.Out, models)
	}
	return writeStageValue(stdio, nonNil(models))
}
