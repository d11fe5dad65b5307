package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/tidwall/gjson"
	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/jsonpos"
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

// readStage reads a stage's input in the standardized format: the flags
// checked, the JSON read and decoded into shape (which names the position
// of a wrong value), then parsed.
func readStage[T any](c *cli.Context, stdio *IO, shape any, parse func([]byte) (T, error)) (T, error) {
	var zero T
	if err := flagAfterArgs(c); err != nil {
		return zero, err
	}
	in, err := readStageInput(c, stdio)
	if err != nil {
		return zero, err
	}
	if err := in.decode(shape); err != nil {
		return zero, err
	}
	v, err := parse(in.data)
	if err != nil {
		return zero, inputErr(in, err)
	}
	return v, nil
}

// checkJSON reports whether the input is one JSON value, naming the line
// and column of the first fault.
func (in stageInput) checkJSON() error { return jsonpos.Check(in.name, in.data) }

// checkStream checks each event of a recorded stream in the framing f.
func (in stageInput) checkStream(f providers.Framing) error {
	return jsonpos.CheckStream(in.name, in.data, f == providers.NDJSON)
}

// decode checks the input's syntax, then decodes it into v, naming the line
// and column of a value of the wrong type, then the entries' shape.
func (in stageInput) decode(v any) error {
	if err := jsonpos.Decode(in.name, in.data, v); err != nil {
		return err
	}
	return in.checkEntries(v)
}

// checkEntries checks the entries of a standardized array (DESIGN §2) for
// what the next stage needs, naming the first faulty entry, its line and
// column.
func (in stageInput) checkEntries(v any) error {
	kind := providers.StandardTools
	switch v.(type) {
	case *[]providers.ToolCall:
		kind = providers.StandardCalls
	case *[]providers.ToolResult:
		kind = providers.StandardResults
	case *[]standardTool:
	default:
		return nil
	}
	if i, at, fault := providers.FirstFault(kind, in.data); fault != "" {
		return jsonpos.At(in.name, in.data, at, "entry %d: %s", i, fault)
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
	return jsonpos.At(in.name, in.data, v.Index, "the request body is %s, expected a JSON object (ask provider request prints one)", kind)
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
		for _, n := range namesOf(f) {
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

// printTable prints rows under a header, in columns, for a person.
func printTable(w io.Writer, header []string, rows ...[]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, row := range append([][]string{header}, rows...) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}
