package main

import (
	"fmt"
	"time"

	"github.com/tidwall/gjson"
	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
)

func providerSendCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "send",
		Usage:     "POST a request body from stdin to the provider, with the key from the environment; print the response as it arrives",
		ArgsUsage: "[FILE|-]",
		Description: "The body's own \"stream\" field decides whether the answer is streamed (Ollama streams unless it is false;\n" +
			"Gemini's body has none, so it streams unless --no-stream). HTTP errors exit 3, a missing or rejected key 4.",
		Action: func(c *cli.Context) error { return providerSend(c, stdio) },
	}
}

func providerSend(c *cli.Context, stdio *IO) error {
	in, err := readStageInput(c, stdio)
	if err != nil {
		return err
	}
	if err := in.CheckRequestBody(); err != nil {
		return err
	}
	s, err := resolve(c, stdio)
	if err != nil {
		return err
	}
	prov, _, err := s.Protocol()
	if err != nil {
		return err
	}
	if prov.LocalProgram {
		return usageErr("%s runs a local program, not an HTTP API: there is nothing to send a body to", prov.Name)
	}
	// The body names its model; a provider that puts the model in the URL
	// needs it there.
	if m := gjson.GetBytes(in.Data, "model").String(); m != "" && s.Model.Source != "flag --model" {
		s.Model = run.Given(m, "the request body")
	}
	s.NoTools = run.Given(true, "ask provider send") // it sends a body, and runs no tools
	r, err := buildRun(c, stdio, statusFor(stdio, true), s, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	stream := prov.SendStreams(in.Data, s.NoStream.Value)
	hooks := providers.Hooks{OnRetry: func(attempt int, delay time.Duration, err error) {
		if !c.Bool("quiet") {
			fmt.Fprintf(stdio.Err, "ask: retry %d in %s: %v\n", attempt, delay.Round(time.Millisecond), err)
		}
	}}
	return r.Send(c.Context, in.Data, stream, stdio.Out, hooks)
}
