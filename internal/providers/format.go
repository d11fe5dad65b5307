package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/jsonpos"
)

// Tool is one entry of the standardized tools array:
//
//	[{"type":"function","function":{"name":"...","description":"...","parameters":{...}}}]
type Tool struct {
	Name        string
	Description string
	// Parameters is a JSON Schema object; nil means the tool takes none.
	Parameters json.RawMessage
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is one entry of the standardized tool-calls array. Arguments is the
// JSON text exactly as the model produced it, so that invalid JSON survives
// to be reported back to the model.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Unreadable, set by the text tool protocol, says why a call the model
	// wrote could not be read (Name is the tool it named, if any): the loop
	// answers it with this text, in its place among the step's results,
	// and runs nothing. It is not part of the standardized format.
	Unreadable string `json:"-"`
}

// ToolResult is one entry of the standardized tool-results array.
type ToolResult struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}

// EmptyParameters is the schema of a tool that takes no arguments.
var EmptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// ParamsOrEmpty returns the tool's schema, or an empty object schema.
func (t Tool) ParamsOrEmpty() json.RawMessage {
	if len(bytes.TrimSpace(t.Parameters)) == 0 || string(t.Parameters) == "null" {
		return EmptyParameters
	}
	return t.Parameters
}

// ArgumentsOrEmpty returns the call's arguments, or "{}" when the model sent
// none. It does not validate them.
func (c ToolCall) ArgumentsOrEmpty() string {
	if len(bytes.TrimSpace([]byte(c.Arguments))) == 0 {
		return "{}"
	}
	return c.Arguments
}

// MarshalTools renders tools in the standardized format.
func MarshalTools(tools []Tool) ([]byte, error) {
	out := make([]wireTool, len(tools))
	for i, t := range tools {
		out[i] = wireTool{Type: "function", Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: t.ParamsOrEmpty()}}
	}
	return json.Marshal(out)
}

// ParseTools reads the standardized tools format.
func ParseTools(data []byte) ([]Tool, error) {
	var in []wireTool
	if err := decodeStrict(data, &in); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	tools := make([]Tool, len(in))
	for i, w := range in {
		if w.Type != "" && w.Type != "function" {
			return nil, fmt.Errorf("tools: entry %d: type %q is not \"function\"", i, w.Type)
		}
		if w.Function.Name == "" {
			return nil, fmt.Errorf("tools: entry %d: function.name is missing", i)
		}
		tools[i] = Tool{Name: w.Function.Name, Description: w.Function.Description, Parameters: w.Function.Parameters}
	}
	return tools, nil
}

// ParseToolCallsJSON reads the standardized tool-calls format.
func ParseToolCallsJSON(data []byte) ([]ToolCall, error) {
	var calls []ToolCall
	if err := decodeStrict(data, &calls); err != nil {
		return nil, fmt.Errorf("tool calls: %w", err)
	}
	for i, c := range calls {
		if c.Name == "" {
			return nil, fmt.Errorf("tool calls: entry %d: name is missing", i)
		}
	}
	return calls, nil
}

// ParseToolResultsJSON reads the standardized tool-results format.
func ParseToolResultsJSON(data []byte) ([]ToolResult, error) {
	var results []ToolResult
	if err := decodeStrict(data, &results); err != nil {
		return nil, fmt.Errorf("tool results: %w", err)
	}
	for i, r := range results {
		if r.ID == "" {
			return nil, fmt.Errorf("tool results: entry %d: id is missing", i)
		}
	}
	return results, nil
}

// decodeStrict decodes one JSON value and reports where malformed input went
// wrong, as line:column.
func decodeStrict(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return errors.New("empty input: expected a JSON array")
	}
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := jsonpos.Position(data, syn.Offset)
		return fmt.Errorf("invalid JSON at line %d, column %d: %v", line, col, syn)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		line, col := jsonpos.Position(data, typ.Offset)
		where := typ.Field
		if where == "" {
			where = "value"
		}
		return fmt.Errorf("line %d, column %d: %s is a JSON %s, expected %s", line, col, where, typ.Value, typ.Type)
	}
	return err
}

// GeneratedID makes a stable id for a call the provider sent without one. It
// depends only on the reply and the call's position in it, so a replayed run
// rebuilds the same requests.
func GeneratedID(reply []byte, index int) string {
	h := fnv.New64a()
	h.Write(reply)
	return "call_" + strconv.FormatUint(h.Sum64()&0xffffffffff, 36) + "_" + strconv.Itoa(index)
}

// Standard names one of the standardized arrays of DESIGN §2.
type Standard int

const (
	StandardTools Standard = iota
	StandardCalls
	StandardResults
)

// FirstFault finds the first entry of a standardized array that lacks
// what the next stage needs: its index (from 0, as jq counts), the offset
// of the value at fault, and what is wrong; fault is "" when every entry
// is whole.
func FirstFault(kind Standard, data []byte) (entry, offset int, fault string) {
	for i, e := range gjson.ParseBytes(data).Array() {
		switch {
		case kind == StandardCalls && e.Get("name").String() == "":
			return i, e.Index, `"name" is missing or empty: each call needs {"id", "name", "arguments"}`
		case kind == StandardResults && e.Get("id").String() == "":
			return i, e.Index, `"id" is missing or empty: each result needs the id of the call it answers`
		case kind == StandardTools:
			if t := e.Get("type"); t.String() != "" && t.String() != "function" {
				return i, t.Index, fmt.Sprintf(`"type" is %s, expected "function"`, t.Raw)
			}
			if e.Get("function.name").String() == "" {
				return i, e.Index, `"function.name" is missing or empty: each tool needs {"type": "function", "function": {"name", "description", "parameters"}}`
			}
		}
	}
	return 0, 0, ""
}
