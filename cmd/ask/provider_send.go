package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
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
	prov, s, err := s.ForSending(in.Data)
	if err != nil {
		return err
	}
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
