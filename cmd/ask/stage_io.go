package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
)

// The stages (`ask provider ...`, `ask tools run`) share one input and
// output discipline: JSON in from stdin (or a file, or "-"), JSON out,
// compact in a pipe and indented on a terminal, and malformed input
// rejected with exit 2 and the position of the fault.

// stageInput is what a stage read, with the name to use in messages.
type stageInput struct {
	name string // "stdin" or the file's name
	data []byte
}

// readStageInput reads the stage's one optional argument: a file, or "-"
// (and no argument) for stdin. A terminal on stdin is refused rather than
// waited on.
func readStageInput(c *cli.Context, stdio *IO) (stageInput, error) {
	if c.NArg() > 1 {
		return stageInput{}, usageErr("%s reads one input, got %d arguments: pipe the JSON in, or name one file", commandPath(c), c.NArg())
	}
	name := c.Args().First()
	if name != "" && name != "-" {
		data, err := os.ReadFile(absPath(stdio.Wd, name))
		if err != nil {
			return stageInput{}, usageErr("read input: %v", err)
		}
		return stageInput{name: name, data: data}, nil
	}
	if stdio.InTTY || stdio.In == nil {
		return stageInput{}, usageErr("%s reads JSON on stdin: pipe it in (... | %s) or name a file", commandPath(c), commandPath(c))
	}
	data, err := io.ReadAll(stdio.In)
	if err != nil {
		return stageInput{}, usageErr("read stdin: %v", err)
	}
	return stageInput{name: "stdin", data: data}, nil
}

// checkJSON reports whether data is one JSON value, naming the line and
// column of the first fault.
func (in stageInput) checkJSON() error {
	if len(bytes.TrimSpace(in.data)) == 0 {
		return usageErr("%s is empty: expected JSON", in.name)
	}
	var v any
	err := json.Unmarshal(in.data, &v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := syntaxPosition(in.data, syn)
		return usageErr("%s: invalid JSON at line %d, column %d: %v", in.name, line, col, syn)
	}
	if err != nil {
		return usageErr("%s: %v", in.name, err)
	}
	return nil
}

// decode checks the input's syntax, then decodes it into v, naming the line
// and column of a value of the wrong type.
func (in stageInput) decode(v any) error {
	if err := in.checkJSON(); err != nil {
		return err
	}
	err := json.Unmarshal(in.data, v)
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		line, col := position(in.data, valueStart(in.data, typ))
		where := typ.Field
		if where == "" {
			where = "the value"
		}
		return usageErr("%s: line %d, column %d: %s is a JSON %s, expected %s", in.name, line, col, where, typ.Value, jsonKind(typ.Type.Kind().String()))
	}
	if err != nil {
		return usageErr("%s: %v", in.name, err)
	}
	return in.checkEntries(v)
}

// checkEntries checks the entries of a standardized array (DESIGN §2) for
// what the next stage needs, naming the first faulty entry (counted from
// 0, as jq does), its line and column.
func (in stageInput) checkEntries(v any) error {
	var check func(e gjson.Result) (at gjson.Result, fault string)
	switch v.(type) {
	case *[]providers.ToolCall:
		check = func(e gjson.Result) (gjson.Result, string) {
			if e.Get("name").String() == "" {
				return e, `"name" is missing or empty: each call needs {"id", "name", "arguments"}`
			}
			return e, ""
		}
	case *[]providers.ToolResult:
		check = func(e gjson.Result) (gjson.Result, string) {
			if e.Get("id").String() == "" {
				return e, `"id" is missing or empty: each result needs the id of the call it answers`
			}
			return e, ""
		}
	case *[]standardTool:
		check = func(e gjson.Result) (gjson.Result, string) {
			if t := e.Get("type"); t.String() != "" && t.String() != "function" {
				return t, fmt.Sprintf(`"type" is %s, expected "function"`, t.Raw)
			}
			if e.Get("function.name").String() == "" {
				return e, `"function.name" is missing or empty: each tool needs {"type": "function", "function": {"name", "description", "parameters"}}`
			}
			return e, ""
		}
	default:
		return nil
	}
	for i, e := range gjson.ParseBytes(in.data).Array() {
		if at, fault := check(e); fault != "" {
			line, col := position(in.data, int64(at.Index))
			return usageErr("%s: line %d, column %d: entry %d: %s", in.name, line, col, i, fault)
		}
	}
	return nil
}

// checkRequestBody checks that the input is one JSON object, as every
// provider's request body is.
func (in stageInput) checkRequestBody() error {
	if err := in.checkJSON(); err != nil {
		return err
	}
	v := gjson.ParseBytes(in.data)
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
	line, col := position(in.data, int64(v.Index))
	return usageErr("%s: line %d, column %d: the request body is %s, expected a JSON object (ask provider request prints one)", in.name, line, col, kind)
}

// syntaxPosition is the line and column of the byte a syntax error is
// about: the decoder's offset counts that byte as read, except at the end
// of the input, where the position is just past the last byte.
func syntaxPosition(data []byte, err *json.SyntaxError) (line, col int) {
	off := err.Offset
	if off > 0 && off <= int64(len(data)) && !strings.HasPrefix(err.Error(), "unexpected end") {
		off--
	}
	return position(data, off)
}

// valueStart finds where the value of a type error begins. The decoder
// stops just after a string or a literal and just inside an object or
// array.
func valueStart(data []byte, err *json.UnmarshalTypeError) int64 {
	off := min(max(err.Offset-1, 0), int64(len(data)-1))
	if off < 0 {
		return 0
	}
	if err.Value != "string" || data[off] != '"' {
		// A number, true, false or null: back to its first character.
		for off > 0 && isLiteralByte(data[off-1]) && isLiteralByte(data[off]) {
			off--
		}
		return off
	}
	for i := off - 1; i >= 0; i-- {
		if data[i] != '"' {
			continue
		}
		backslashes := 0
		for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i
		}
	}
	return off
}

// isLiteralByte reports whether b can be part of a number, true, false or
// null.
func isLiteralByte(b byte) bool { return strings.IndexByte("0123456789+-.eEtruefalsn", b) >= 0 }

// position converts a 0-based byte index into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	return 1 + bytes.Count(before, []byte("\n")), int(off) - bytes.LastIndexByte(before, '\n')
}

// jsonKind names a Go kind the way a JSON user would.
func jsonKind(kind string) string {
	switch kind {
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int64", "float64":
		return "a number"
	}
	return kind
}

// writeStageJSON prints raw JSON, indented on a terminal and compact in a
// pipe, on one line of its own.
func writeStageJSON(stdio *IO, raw []byte) error {
	var out bytes.Buffer
	var err error
	if stdio.OutTTY {
		err = json.Indent(&out, raw, "", "  ")
	} else {
		err = json.Compact(&out, raw)
	}
	if err != nil {
		return fmt.Errorf("output is not JSON: %w", err)
	}
	out.WriteByte('\n')
	_, err = stdio.Out.Write(out.Bytes())
	return err
}

// writeStageValue marshals v (without HTML escaping) and prints it as
// writeStageJSON does.
func writeStageValue(stdio *IO, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return writeStageJSON(stdio, b.Bytes())
}

// inputErr gives a fault found in a stage's input its exit code: an error
// the provider reported (inside a recorded body or stream) keeps its own
// code (3, or 4 for a rejected key); anything else is bad input (2).
func inputErr(in stageInput, err error) error {
	var apiErr *providers.APIError
	if errors.As(err, &apiErr) {
		return fmt.Errorf("%s holds an error from the provider: %w", in.name, err)
	}
	return withCode(exitUsage, fmt.Errorf("%s: %w", in.name, err))
}

// flagAfterArgs refuses a known flag written after a command's arguments:
// urfave/cli stops reading flags at the first argument, and such a flag
// would silently become part of a prompt or a file name.
func flagAfterArgs(c *cli.Context) error {
	known := map[string]bool{}
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			known[n] = true
		}
	}
	for _, a := range c.Args().Slice() {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if len(a) > 1 && a[0] == '-' && known[name] {
			return usageErr("%s: put %s before the arguments (%s [flags] ...)", commandPath(c), a, commandPath(c))
		}
	}
	return nil
}

// commandPath is a subcommand's full name, such as "ask provider send".
func commandPath(c *cli.Context) string {
	var names []string
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && ctx.Command.Name != "" {
			names = append([]string{ctx.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// subcommandAction is the action of a command that only groups others:
// help without arguments, a usage error (exit 2) for an unknown name.
func subcommandAction(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.ShowSubcommandHelp(c)
	}
	var names []string
	for _, sub := range c.Command.Subcommands {
		names = append(names, sub.Name)
	}
	return usageErr("%s: unknown command %q: choose %s", commandPath(c), c.Args().First(), strings.Join(names, ", "))
}
