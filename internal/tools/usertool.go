package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/jsonpos"
	"github.com/ask-cli/ask/internal/schema"
)

// A tools file (--tools-file) declares commands the model may call:
//
//	{"tools": [{
//	  "name": "word_count",
//	  "description": "Count the words of a file in the working directory",
//	  "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
//	  "command": "jq -r .path | xargs wc -w",
//	  "risk": "read",
//	  "requires_approval": false,
//	  "timeout": "10s"
//	}]}
//
// A bare array of tools is accepted too. The command runs with /bin/sh -c in
// the working directory (relative paths in it are relative to --workdir),
// with the arguments JSON and a newline on stdin and the environment of the
// shell tool (no credentials). Its stdout is the result; a non-zero exit, a
// timeout or a signal is an error result holding stdout and stderr.
//
// Defaults: parameters {"type":"object","properties":{}}; risk "exec" (a
// command can do anything unless its author says otherwise);
// requires_approval true unless the risk is "read"; timeout 60s. The timeout
// is a Go duration ("90s", "2m") or a number of seconds.

// userToolSpec is one tool of a tools file, as written.
type userToolSpec struct {
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	Parameters       json.RawMessage `json:"parameters"`
	Command          string          `json:"command"`
	Risk             Risk            `json:"risk"`
	RequiresApproval *bool           `json:"requires_approval"`
	Timeout          json.RawMessage `json:"timeout"`
}

const userToolFields = "name, description, parameters, command, risk, requires_approval, timeout"

// emptyParameters is the schema of a tool that takes no arguments.
const emptyParameters = `{"type":"object","properties":{}}`

type userTool struct {
	root    *Root
	info    Info
	command string
	timeout time.Duration
	schema  *schema.Schema
}

// LoadToolsFile reads the user-defined tools declared in path. Every problem
// is reported with the file, the tool and what to fix: unknown fields, bad
// or duplicate names (a built-in's name included), invalid schemas, bad risk
// or timeout values.
func LoadToolsFile(path string, root *Root) ([]Tool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tools file: %w", err)
	}
	// A syntax error is named by line and column, which a hand-edited
	// file needs.
	if len(bytes.TrimSpace(data)) > 0 {
		if err := jsonpos.Check(path, data); err != nil {
			return nil, fmt.Errorf("tools file %w", err)
		}
	}
	tools, err := parseToolsFile(data, root)
	if err != nil {
		return nil, fmt.Errorf("tools file %s: %w", path, err)
	}
	return tools, nil
}

func parseToolsFile(data []byte, root *Root) ([]Tool, error) {
	raws, err := splitToolsFile(data)
	if err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New(`no tools declared: write {"tools": [{"name": ..., "description": ..., "command": ...}]}`)
	}
	taken := map[string]string{}
	for _, b := range Builtins(root) {
		taken[b.Info().Name] = "a built-in tool"
	}
	var out []Tool
	for i, raw := range raws {
		t, err := parseUserTool(raw, root)
		if err != nil {
			return nil, fmt.Errorf("tool #%d%s: %w", i+1, quotedName(raw), err)
		}
		name := t.info.Name
		if other, dup := taken[name]; dup {
			return nil, fmt.Errorf("tool #%d %q: the name is already used by %s; choose another", i+1, name, other)
		}
		taken[name] = fmt.Sprintf("tool #%d", i+1)
		out = append(out, t)
	}
	return out, nil
}

// splitToolsFile returns the raw tool objects of {"tools": [...]} or [...].
func splitToolsFile(data []byte) ([]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New(`the file is empty: write {"tools": [...]}`)
	}
	var raws []json.RawMessage
	if trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &raws); err != nil {
			return nil, fmt.Errorf("not valid JSON: %v", err)
		}
		return raws, nil
	}
	var doc struct {
		Tools []json.RawMessage `json:"tools"`
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field") {
			return nil, fmt.Errorf("%s at the top level: the only field is \"tools\"", strings.TrimPrefix(err.Error(), "json: "))
		}
		return nil, fmt.Errorf(`not valid JSON (want {"tools": [...]}): %v`, err)
	}
	if dec.More() {
		return nil, errors.New("unexpected data after the top-level object")
	}
	return doc.Tools, nil
}

// quotedName is ` "name"` when raw has a string name, for error messages.
func quotedName(raw json.RawMessage) string {
	var v struct {
		Name any `json:"name"`
	}
	if json.Unmarshal(raw, &v) == nil {
		if s, ok := v.Name.(string); ok && s != "" {
			return fmt.Sprintf(" %q", s)
		}
	}
	return ""
}

func parseUserTool(raw json.RawMessage, root *Root) (*userTool, error) {
	var spec userToolSpec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if strings.HasPrefix(msg, "unknown field") {
			return nil, fmt.Errorf("%s (the fields are: %s)", msg, userToolFields)
		}
		return nil, fmt.Errorf("not a valid tool object: %s", msg)
	}
	if spec.Name == "" {
		return nil, errors.New("name is required")
	}
	if !validName.MatchString(spec.Name) {
		return nil, errors.New("name must be 1-64 letters, digits, '_' or '-' (what every provider accepts)")
	}
	if strings.TrimSpace(spec.Description) == "" {
		return nil, errors.New("description is required: it is how the model learns what the tool does")
	}
	if strings.TrimSpace(spec.Command) == "" {
		return nil, errors.New("command is required")
	}
	risk := spec.Risk
	switch risk {
	case "":
		risk = Exec
	case Read, Write, Exec:
	default:
		return nil, fmt.Errorf("risk %q: choose read, write or exec", spec.Risk)
	}
	approval := risk != Read
	if spec.RequiresApproval != nil {
		approval = *spec.RequiresApproval
	}
	timeout, err := parseTimeout(spec.Timeout)
	if err != nil {
		return nil, err
	}
	params, schema, err := compileParameters(spec.Parameters)
	if err != nil {
		return nil, err
	}
	return &userTool{
		root: root,
		info: Info{Name: spec.Name, Description: spec.Description, Parameters: params,
			Risk: risk, RequiresApproval: approval},
		command: spec.Command,
		timeout: timeout,
		schema:  schema,
	}, nil
}

// parseTimeout reads "90s"-style durations and plain numbers of seconds.
func parseTimeout(raw json.RawMessage) (time.Duration, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return shellDefaultTimeout, nil
	}
	var d time.Duration
	var s string
	var secs float64
	switch {
	case json.Unmarshal(raw, &s) == nil:
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("timeout %q: write a duration such as \"30s\" or \"2m\", or a number of seconds", s)
		}
	case json.Unmarshal(raw, &secs) == nil:
		d = time.Duration(secs * float64(time.Second))
	default:
		return 0, fmt.Errorf("timeout %s: write a duration such as \"30s\" or a number of seconds", raw)
	}
	if d <= 0 {
		return 0, fmt.Errorf("timeout %s: must be positive", raw)
	}
	return d, nil
}

// compileParameters checks that params is a JSON Schema for an object and
// compiles it, so that a broken schema is found when the file is loaded, not
// when the model first calls the tool. A "$ref" must not read local files
// or fetch URLs, and schema.Compile refuses every one that leaves the
// schema.
func compileParameters(params json.RawMessage) (json.RawMessage, *schema.Schema, error) {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(emptyParameters)
	}
	var shape map[string]json.RawMessage
	if err := json.Unmarshal(params, &shape); err != nil {
		return nil, nil, errors.New("parameters must be a JSON Schema object, such as {\"type\":\"object\",\"properties\":{...}}")
	}
	if t, ok := shape["type"]; ok && string(bytes.TrimSpace(t)) != `"object"` {
		return nil, nil, fmt.Errorf("parameters: \"type\" must be \"object\" (the arguments are always one JSON object), got %s", t)
	}
	compiled, err := schema.Compile(params)
	if err != nil {
		return nil, nil, fmt.Errorf("parameters is not a valid JSON Schema: %v", err)
	}
	var compact bytes.Buffer
	json.Compact(&compact, params) // valid: it was unmarshaled above
	return json.RawMessage(compact.Bytes()), compiled, nil
}

func (t *userTool) Info() Info {
	info := t.info
	info.Sandboxed = t.root.sandboxed()
	return info
}

func (t *userTool) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	args := bytes.TrimSpace(raw)
	if len(args) == 0 {
		args = []byte("{}")
	}
	// The registry validates too; checking here keeps the tool safe to run
	// on its own (the command must never see arguments its schema rejects).
	doc, err := schema.Decode(args)
	if err != nil {
		return "", fmt.Errorf("invalid arguments for %s: not valid JSON (%v)", t.info.Name, err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return "", fmt.Errorf("invalid arguments for %s: must be a JSON object, got %s", t.info.Name, jsonKind(doc))
	}
	if err := t.schema.Validate(doc); err != nil {
		return "", fmt.Errorf("invalid arguments for %s:\n%s\nparameters schema: %s", t.info.Name, describeViolations(err), t.info.Parameters)
	}
	stdin := append(append([]byte(nil), args...), '\n')
	done := t.root.Watch(t.info.Name)
	res, err := runShell(ctx, t.root, t.command, stdin, t.timeout)
	done()
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.info.Name, err)
	}
	if res.failed() {
		return "", fmt.Errorf("%s failed:\n%s", t.info.Name, res.String())
	}
	return res.stdout.String(), nil
}
