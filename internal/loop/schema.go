package loop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaRetries is how many times a final answer that does not match
// Config.Schema is sent back with the validation errors before the run
// stops with StatusSchemaFailed.
const schemaRetries = 2

// maxSchemaProblems bounds the validation errors quoted back to the model
// and in error messages.
const maxSchemaProblems = 8

// Schema is a compiled JSON Schema for the final answer.
type Schema struct {
	compiled *jsonschema.Schema
}

// schemaURL names the schema inside the compiler; it never leaves it.
const schemaURL = "https://ask.invalid/answer.schema.json"

// CompileSchema compiles a JSON Schema for the final answer. Schemas
// without "$schema" are read as draft 2020-12. References reach only into
// the schema itself: nothing is loaded from files or the network.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	switch doc.(type) {
	case map[string]any, bool:
	default:
		return nil, errors.New("a JSON Schema is an object (or true/false)")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(schemaURL)
	var meta *jsonschema.SchemaValidationError
	var verr *jsonschema.ValidationError
	switch {
	case errors.As(err, &meta) && errors.As(meta.Err, &verr):
		return nil, fmt.Errorf("not a valid JSON Schema: %s", strings.Join(problems(verr), "; "))
	case err != nil:
		return nil, errors.New(oneLine(err.Error()))
	}
	return &Schema{compiled: s}, nil
}

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(string) (any, error) {
	return nil, errors.New("only references inside the schema are supported")
}

// SchemaError lists why an answer does not match the schema, one problem a
// line, such as `at /age: got string, want integer`.
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
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return "", &SchemaError{Problems: []string{"the answer is not one JSON value: " + err.Error()}}
	}
	err = s.compiled.Validate(v)
	if err == nil {
		return text, nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return "", &SchemaError{Problems: []string{err.Error()}}
	}
	return "", &SchemaError{Problems: problems(verr)}
}

// problems lists the leaves of a validation error, each with the JSON
// pointer of the value it is about: the inner nodes ("'allOf' failed")
// only summarise them.
func problems(verr *jsonschema.ValidationError) []string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(out) == maxSchemaProblems {
			return
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		u := e.BasicOutput()
		where := u.InstanceLocation
		if where == "" {
			where = "/"
		}
		msg := oneLine(e.Error())
		if u.Error != nil {
			msg = u.Error.String()
		}
		out = append(out, fmt.Sprintf("at %s: %s", where, msg))
	}
	walk(verr)
	return out
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
