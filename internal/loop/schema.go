package loop

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ask-cli/ask/internal/schema"
)

// schemaRetries is how many times a final answer that does not match
// Config.Schema is sent back with the validation errors before the run
// stops with StatusSchemaFailed.
const schemaRetries = 2

// Schema is a compiled JSON Schema for the final answer.
type Schema struct {
	compiled *schema.Schema
}

// CompileSchema compiles a JSON Schema for the final answer. Schemas
// without "$schema" are read as draft 2020-12. References reach only into
// the schema itself: nothing is loaded from files or the network.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	if _, err := schema.Decode(raw); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	s, err := schema.Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %w", err)
	}
	return &Schema{compiled: s}, nil
}

// SchemaError lists why an answer does not match the schema, one problem a
// line, such as `at /properties/age: type: many has type "string", want
// "integer"`.
type SchemaError struct {
	Problems []string
}

func (e *SchemaError) Error() string { return strings.Join(e.Problems, "; ") }

// Check reads the JSON value in an answer and validates it. It returns the
// JSON as text, without a surrounding code fence, or a *SchemaError.
func (s *Schema) Check(answer string) (string, error) {
	text := unfence(answer)
	if text == "" {
		return "", &SchemaError{Problems: []string{"the answer is empty; it must be one JSON value"}}
	}
	v, err := schema.Decode([]byte(text))
	if err != nil {
		return "", &SchemaError{Problems: []string{"the answer is not one JSON value: " + err.Error()}}
	}
	if err := s.compiled.Validate(v); err != nil {
		return "", &SchemaError{Problems: []string{oneLine(err.Error())}}
	}
	return text, nil
}

// unfence trims an answer and removes a Markdown code fence around it,
// which models add even when asked not to.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	body := strings.TrimSuffix(s[3:], "```")
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return s
	}
	// The fence's info string ("json") runs to the first newline.
	if info := strings.TrimSpace(body[:nl]); strings.ContainsAny(info, "{[\"") {
		return s
	}
	return strings.TrimSpace(body[nl+1:])
}

// schemaRetryText asks the model to answer again, quoting what was wrong.
func schemaRetryText(err error) string {
	var b strings.Builder
	b.WriteString("Your answer does not match the required JSON Schema:\n")
	var serr *SchemaError
	if errors.As(err, &serr) {
		for _, p := range serr.Problems {
			b.WriteString("- " + p + "\n")
		}
	} else {
		b.WriteString("- " + err.Error() + "\n")
	}
	b.WriteString("Reply again with only one JSON value that matches the schema: no prose, no code fences.")
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
