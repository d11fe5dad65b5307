package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
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
		Flags:  flagsExcept(runFlags(), requestOnlyFlags),
		Action: func(c *cli.Context) error { return providerRequest(c, stdio) },
	}
}

// flagsExcept drops the flags named in skip.
func flagsExcept(flags []cli.Flag, skip map[string]bool) []cli.Flag {
	var out []cli.Flag
	for _, f := range flags {
		if !skip[f.Names()[0]] {
			out = append(out, f)
		}
	}
	return out
}

// providerRequest renders step 1 as the loop would: the same session
// (prepareRun, as runAction uses it), the prompt as the last user message
// after any earlier conversation.
func providerRequest(c *cli.Context, stdio *IO) error {
	if err := flagAfterArgs(c); err != nil {
		return err
	}
	s, prompt, cleanup, err := prepareRun(c, stdio, sessionWithoutKey)
	defer cleanup()
	if err != nil {
		return err
	}
	if prov, err := catalog.Lookup(s.provider); err == nil && prov.Protocol == "command" {
		return usageErr("%s runs a local program, not an HTTP API: it has no request body", s.provider)
	}
	proto := s.model.CurrentProtocol()
	user, err := proto.UserMessage(prompt)
	if err != nil {
		return fmt.Errorf("render prompt: %w", err)
	}
	body, err := proto.BuildRequest(providers.Request{
		Model:     s.modelName,
		System:    s.system,
		Messages:  append(append([]json.RawMessage{}, s.history...), user),
		Tools:     s.declared,
		Stream:    s.stream,
		MaxTokens: s.maxTokens,
		Schema:    s.schema,
	})
	if err != nil {
		return fmt.Errorf("%s: build request: %w", s.provider, err)
	}
	return writeStageJSON(stdio, body)
}

// sessionWithoutKey is buildSession for commands that send nothing
// (`ask provider request`, `ask tools`): when the chosen provider's key is
// not set, the session is built again with a stand-in for it, so that the
// provider, model and tools are chosen exactly as for a real run. The
// stand-in never leaves the process.
func sessionWithoutKey(c *cli.Context, stdio *IO) (*session, func(), error) {
	s, cleanup, err := buildSession(c, stdio)
	var missing *catalog.MissingKeyError
	if err == nil || !errors.As(err, &missing) || len(missing.Vars) == 0 {
		return s, cleanup, err
	}
	cleanup()
	keyless := *stdio
	getenv := stdio.Getenv
	keyless.Getenv = func(name string) string {
		if name == missing.Vars[0] {
			return "unused-no-request-is-sent"
		}
		return getenv(name)
	}
	s, cleanup, err = buildSession(c, &keyless)
	if s != nil {
		s.io = stdio
	}
	return s, cleanup, err
}
