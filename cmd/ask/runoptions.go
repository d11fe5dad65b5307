package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// answerFlags are the main command's flags for the shape of the answer and
// for carrying on a conversation.
func answerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-tokens", Usage: "cap each model reply at `N` tokens (default: the provider's own)"},
		&cli.StringFlag{Name: "schema", Usage: "answer with JSON matching this JSON Schema: a `FILE`, or the schema itself when it starts with {"},
		&cli.BoolFlag{Name: "continue", Aliases: []string{"c"}, Usage: "carry on the last run's conversation, with its provider, model, mode and tools unless flags say otherwise"},
		&cli.StringFlag{Name: "resume", Usage: "carry on the conversation recorded in the transcript `FILE`"},
	}
}

// useAnswerOptions applies --max-tokens, --schema and an earlier
// conversation to a session built from the flags, and makes the run keep
// its transcript for a later --continue. It runs before useToolProtocol,
// which reads the declared tools.
func useAnswerOptions(c *cli.Context, stdio *IO, s *session, conv *conversation) error {
	n := c.Int("max-tokens")
	if n < 0 {
		return usageErr("--max-tokens must be a positive number of tokens (or 0 for the provider's default)")
	}
	s.maxTokens = n
	if c.IsSet("schema") {
		schema, err := readSchemaFlag(c.String("schema"), stdio.Wd)
		if err != nil {
			return err
		}
		s.schema = schema
		if prov, err := catalog.Lookup(s.provider); err == nil && (schemaInPrompt[prov.Name] || !carriesSchema[prov.Protocol]) {
			s.system += "\n\n" + providers.SchemaInstruction + string(schema)
			if caller, ok := s.model.(*providers.Caller); ok {
				caller.Protocol = schemaProtocol(prov, caller.Protocol)
			}
		}
	}
	if err := useConversation(conv, s); err != nil {
		return err
	}
	s.lastPath = lastTranscriptPath(stdio.Getenv)
	return nil
}

// carriesSchema lists the protocols that put Request.Schema into their
// requests: as native structured output (openai's response_format,
// responses' text.format, ollama's format, gemini's responseSchema,
// anthropic's output_config.format, or for older Claude models an
// instruction of its own). Other protocols (a command model's plain text)
// get providers.SchemaInstruction in the system prompt.
var carriesSchema = map[string]bool{"openai": true, "responses": true, "ollama": true, "gemini": true, "anthropic": true}

// schemaInPrompt lists the providers whose protocol has structured output
// that they reject: DeepSeek answers a response_format of type json_schema
// with HTTP 400 "This response_format type is unavailable now". They get
// the schema in the system prompt only.
var schemaInPrompt = map[string]bool{"deepseek": true}

// schemaProtocol keeps the answer schema out of the requests of a provider
// in schemaInPrompt; other providers' protocols are returned as they are.
// Replay uses it too, so that it rebuilds the same requests.
func schemaProtocol(prov catalog.Provider, p providers.Protocol) providers.Protocol {
	if !schemaInPrompt[prov.Name] {
		return p
	}
	return withoutSchema{p}
}

// withoutSchema is a protocol whose requests never carry Request.Schema.
type withoutSchema struct{ providers.Protocol }

func (w withoutSchema) BuildRequest(r providers.Request) ([]byte, error) {
	r.Schema = nil
	return w.Protocol.BuildRequest(r)
}

// readSchemaFlag reads --schema: inline JSON when the value starts with
// "{", else a file. The schema is compiled now, so that a bad one is a
// usage error before any request is made.
func readSchemaFlag(value, wd string) (json.RawMessage, error) {
	raw := []byte(value)
	name := "--schema"
	if !strings.HasPrefix(strings.TrimSpace(value), "{") {
		if value == "" {
			return nil, usageErr("--schema: give a JSON Schema file, or the schema itself starting with {")
		}
		b, err := os.ReadFile(absPath(wd, value))
		if err != nil {
			return nil, usageErr("--schema: %v", err)
		}
		raw, name = b, "--schema "+value
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, usageErr("%s: not valid JSON: %v", name, err)
	}
	if compact.Len() == 0 || compact.Bytes()[0] != '{' {
		return nil, usageErr("%s: a JSON Schema for the answer must be a JSON object", name)
	}
	if _, err := loop.CompileSchema(compact.Bytes()); err != nil {
		return nil, usageErr("%s: %v", name, err)
	}
	return compact.Bytes(), nil
}
