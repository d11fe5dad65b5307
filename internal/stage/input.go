// Package stage is what the stage commands (`ask provider …`, `ask tools
// run`) do between reading their input and printing their output: the
// input checked in the standardized formats (DESIGN §2) with the position
// of a fault, a provider's reply read as a run reads it, the next request
// of a run taken step by step, and the providers listed from the catalog.
// A fault in the input is a fault.Usage error (exit 2); an error the
// provider reported keeps its own kind.
package stage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/termtext"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/jsonpos"
	"github.com/ask-cli/ask/internal/providers"
)

// Input is what a stage read, with the name to use in messages.
type Input struct {
	Name string // "stdin" or the file's name
	Data []byte
}

// CheckJSON reports whether the input is one JSON value, naming the line
// and column of the first fault.
func (in Input) CheckJSON() error { return jsonpos.Check(in.Name, in.Data) }

// CheckStream checks each event of a recorded stream in the framing f.
func (in Input) CheckStream(f providers.Framing) error {
	return jsonpos.CheckStream(in.Name, in.Data, f == providers.NDJSON)
}

// Decode checks the input's syntax, then decodes it into v, naming the line
// and column of a value of the wrong type, then the entries' shape.
func (in Input) Decode(v any) error {
	if err := jsonpos.Decode(in.Name, in.Data, v); err != nil {
		return err
	}
	return in.checkEntries(v)
}

// checkEntries checks the entries of a standardized array (DESIGN §2) for
// what the next stage needs, naming the first faulty entry, its line and
// column.
func (in Input) checkEntries(v any) error {
	kind := providers.StandardTools
	switch v.(type) {
	case *[]providers.ToolCall:
		kind = providers.StandardCalls
	case *[]providers.ToolResult:
		kind = providers.StandardResults
	case *[]StandardTool:
	default:
		return nil
	}
	if i, at, fault := providers.FirstFault(kind, in.Data); fault != "" {
		return jsonpos.At(in.Name, in.Data, at, "entry %d: %s", i, fault)
	}
	return nil
}

// CheckRequestBody checks that the input is one JSON object, as every
// provider's request body is.
func (in Input) CheckRequestBody() error {
	if err := in.CheckJSON(); err != nil {
		return err
	}
	v := gjson.ParseBytes(in.Data)
	if v.IsObject() {
		return nil
	}
	var kind string
	switch {
	case v.IsArray():
		kind = "a JSON array"
	case v.Type == gjson.Number:
		kind = "a JSON number"
	case v.Type == gjson.String:
		kind = "a JSON string"
	default:
		kind = "JSON " + v.Raw // null, true, false
	}
	return jsonpos.At(in.Name, in.Data, v.Index, "the request body is %s, expected a JSON object (ask provider request prints one)", kind)
}

// Fault gives a fault found in the input its kind: an error the provider
// reported (inside a recorded body or stream) keeps its own (exit 3, or 4
// for a rejected key); anything else is bad input (exit 2).
func (in Input) Fault(err error) error {
	var apiErr *providers.APIError
	if errors.As(err, &apiErr) {
		return fmt.Errorf("%s holds an error from the provider: %w", in.Name, err)
	}
	return usage(fmt.Errorf("%s: %w", in.Name, err))
}

// usage makes err bad input, exit 2, keeping its message.
func usage(err error) error { return &fault.Error{Kind: fault.Usage, Err: err} }

// StandardTool mirrors the standardized tools format (DESIGN §2), so that
// a value of the wrong type is reported with its position.
type StandardTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// WriteJSON prints raw JSON, indented for a person (pretty) and compact in
// a pipe, on one line of its own.
func WriteJSON(w io.Writer, pretty bool, raw []byte) error {
	var out bytes.Buffer
	var err error
	if pretty {
		// Indent keeps what follows the value (an encoder's newline), and
		// the line's own newline would follow it: a blank line.
		err = json.Indent(&out, bytes.TrimRight(raw, " \t\r\n"), "", "  ")
	} else {
		err = json.Compact(&out, raw)
	}
	if err != nil {
		return fmt.Errorf("output is not JSON: %w", err)
	}
	out.WriteByte('\n')
	b := out.Bytes()
	if pretty {
		// Pretty means a terminal: text a server or a model wrote in it
		// must not drive it. The value read back is the same.
		b = termtext.JSON(b)
	}
	_, err = w.Write(b)
	return err
}

// WriteValue marshals v (without HTML escaping) and prints it as WriteJSON
// does.
func WriteValue(w io.Writer, pretty bool, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return WriteJSON(w, pretty, b.Bytes())
}
