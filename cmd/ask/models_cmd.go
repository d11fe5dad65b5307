package main

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/run"
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
			&cli.StringFlag{Name: "provider", Aliases: []string{"p"}, Usage: "provider: " + strings.Join(catalog.Names(), ", ")},
			&cli.StringFlag{Name: "base-url", Usage: "provider base URL"},
			retriesFlag(run.DefaultRetries),
			&cli.BoolFlag{Name: "json", Usage: "print JSON even on a terminal"},
		},
		Action: func(c *cli.Context) error { return modelsAction(c, stdio) },
	}
}

func modelsAction(c *cli.Context, stdio *IO) error {
	if err := flagAfterArgs(c); err != nil {
		return err
	}
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
	if models == nil {
		models = []providers.Model{}
	}
	if stdio.OutTTY && !c.Bool("json") {
		return modelsTable(stdio, models)
	}
	return writeStageValue(stdio, models)
}

// modelsTable shows the models to a person, with the columns the
// provider filled for at least one of them.
func modelsTable(stdio *IO, models []providers.Model) error {
	columns := []struct {
		head string
		cell func(m providers.Model) string
	}{
		{"ID", func(m providers.Model) string { return m.ID }},
		{"NAME", func(m providers.Model) string {
			if m.Name == m.ID {
				return ""
			}
			return m.Name
		}},
		{"CONTEXT", func(m providers.Model) string { return count(m.ContextLength) }},
		{"MAX OUTPUT", func(m providers.Model) string { return count(m.MaxOutputTokens) }},
		{"TOOLS", func(m providers.Model) string {
			if m.Tools == nil {
				return ""
			}
			return yesNo(*m.Tools)
		}},
		{"$/M IN", func(m providers.Model) string { return m.InputPrice }},
		{"$/M OUT", func(m providers.Model) string { return m.OutputPrice }},
		{"SIZE", func(m providers.Model) string {
			if m.Size <= 0 {
				return ""
			}
			return strconv.FormatFloat(float64(m.Size)/(1<<30), 'f', 1, 64) + " GiB"
		}},
		{"CREATED", func(m providers.Model) string { return m.Created }},
		{"OWNED BY", func(m providers.Model) string { return m.OwnedBy }},
	}
	var header []string
	var cells []func(providers.Model) string
	for _, col := range columns {
		for _, m := range models {
			if col.cell(m) != "" {
				header, cells = append(header, col.head), append(cells, col.cell)
				break
			}
		}
	}
	if len(header) == 0 {
		header, cells = []string{"ID"}, []func(providers.Model) string{columns[0].cell}
	}
	rows := make([][]string, len(models))
	for i, m := range models {
		for _, cell := range cells {
			rows[i] = append(rows[i], orDash(cell(m)))
		}
	}
	return printTable(stdio.Out, header, rows...)
}

// count is a token count for a table, "" for none.
func count(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}
