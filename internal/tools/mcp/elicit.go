package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/termtext"
)

// clientOptions are the client's for the server called name: no roots
// (see the package comment), and elicitation, answered at the terminal
// when there is one and declined when there is not.
func clientOptions(name string, opts Options) *sdk.ClientOptions {
	return &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{},
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return elicit(ctx, name, req.Params, opts.Ask)
		},
	}
}

// field is one property of a form a server asks to be filled.
type field struct {
	Name        string
	Title       string
	Description string
	Type        string // string, number, integer or boolean
	Enum        []string
	Default     any // nil for none
	Required    bool
}

// formFields reads a requested schema, which the spec limits to a flat
// object of strings, numbers, integers and booleans (strings may be
// enums). Fields are in name order: the schema is a JSON object, whose
// keys have no order a client may rely on.
func formFields(schema any) ([]field, error) {
	data, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("the form's schema: %v", err)
	}
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("the form's schema: %v", err)
	}
	if s.Type != "" && s.Type != "object" {
		return nil, fmt.Errorf("the form's schema is of type %q, not an object", s.Type)
	}
	var out []field
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		var p struct {
			Type        string            `json:"type"`
			Title       string            `json:"title"`
			Description string            `json:"description"`
			Enum        []json.RawMessage `json:"enum"`
			OneOf       []struct {
				Const json.RawMessage `json:"const"`
			} `json:"oneOf"`
			Default json.RawMessage `json:"default"`
		}
		if err := json.Unmarshal(s.Properties[name], &p); err != nil {
			return nil, fmt.Errorf("field %q: %v", name, err)
		}
		f := field{Name: name, Title: p.Title, Description: p.Description, Type: p.Type, Required: slices.Contains(s.Required, name)}
		switch f.Type {
		case "string", "number", "integer", "boolean":
		default:
			return nil, fmt.Errorf("field %q is of type %q: a form takes strings, numbers, integers and booleans", name, f.Type)
		}
		for _, raw := range p.Enum {
			var v string
			if json.Unmarshal(raw, &v) == nil {
				f.Enum = append(f.Enum, v)
			}
		}
		for _, o := range p.OneOf {
			var v string
			if json.Unmarshal(o.Const, &v) == nil {
				f.Enum = append(f.Enum, v)
			}
		}
		if len(p.Default) > 0 && string(p.Default) != "null" {
			v, why := f.parse(strings.Trim(string(p.Default), `"`))
			if why == "" {
				f.Default = v
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// parse reads what was typed for f; why says what is wrong with it.
func (f field) parse(text string) (value any, why string) {
	text = strings.TrimSpace(text)
	switch f.Type {
	case "boolean":
		switch strings.ToLower(text) {
		case "y", "yes", "true":
			return true, ""
		case "n", "no", "false":
			return false, ""
		}
		return nil, "answer yes or no"
	case "integer":
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			if x, ferr := strconv.ParseFloat(text, 64); ferr == nil && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int64(x), ""
			}
			return nil, "type a whole number"
		}
		return n, ""
	case "number":
		x, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, "type a number"
		}
		return x, ""
	}
	if len(f.Enum) > 0 && !slices.Contains(f.Enum, text) {
		return nil, "choose " + termtext.Safe(strings.Join(f.Enum, ", ")) // the server's words
	}
	return text, ""
}

// question is the line that asks for f, escaped: a server wrote every
// word of it.
func (f field) question() string {
	var b strings.Builder
	b.WriteString("  ")
	b.WriteString(termtext.Safe(f.Name))
	var about []string
	if f.Title != "" {
		about = append(about, termtext.Safe(f.Title))
	}
	if f.Description != "" {
		about = append(about, termtext.Safe(f.Description))
	}
	switch {
	case len(f.Enum) > 0:
		about = append(about, "one of "+termtext.Safe(strings.Join(f.Enum, ", ")))
	case f.Type == "boolean":
		about = append(about, "yes or no")
	case f.Type != "string":
		about = append(about, "a "+f.Type)
	}
	if len(about) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(about, "; "))
	}
	switch {
	case f.Default != nil:
		fmt.Fprintf(&b, " [%s]", termtext.Safe(showValue(f.Default)))
	case !f.Required:
		b.WriteString(" [leave empty to skip]")
	}
	b.WriteString(": ")
	return b.String()
}

func showValue(v any) string {
	switch v := v.(type) {
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// withDefaults fills each field left out of content that has a default,
// as SEP-1034 asks of a client that accepts.
func withDefaults(fields []field, content map[string]any) map[string]any {
	if content == nil {
		content = map[string]any{}
	}
	for _, f := range fields {
		if _, ok := content[f.Name]; !ok && f.Default != nil {
			content[f.Name] = f.Default
		}
	}
	return content
}

// elicit answers a server's request for input: at a terminal (ask), the
// person fills the form field by field and then sends or declines it;
// without one, it is declined. A request to open a URL is declined: ask
// opens nothing a server names.
func elicit(ctx context.Context, server string, p *sdk.ElicitParams, ask func(context.Context, string) (string, error)) (*sdk.ElicitResult, error) {
	decline := &sdk.ElicitResult{Action: "decline"}
	if ask == nil || p == nil || (p.Mode != "" && p.Mode != "form") {
		return decline, nil
	}
	fields, err := formFields(p.RequestedSchema)
	if err != nil {
		return decline, nil
	}
	head := fmt.Sprintf("MCP server %s asks: %s\n", termtext.Safe(server), termtext.SafeLines(p.Message))
	if len(fields) > 0 {
		head += "Press Enter to take the value in brackets.\n"
	}
	content := map[string]any{}
	for _, f := range fields {
		for {
			text, err := ask(ctx, head+f.question())
			head = ""
			if err != nil {
				return &sdk.ElicitResult{Action: "cancel"}, nil
			}
			if strings.TrimSpace(text) == "" {
				if f.Default != nil || !f.Required {
					break
				}
				head = "  " + termtext.Safe(f.Name) + " is required\n"
				continue
			}
			v, why := f.parse(text)
			if why != "" {
				head = "  " + why + "\n"
				continue
			}
			content[f.Name] = v
			break
		}
	}
	q := head + fmt.Sprintf("Send this to %s? [y]es [n]o: ", termtext.Safe(server))
	for {
		text, err := ask(ctx, q)
		if err != nil {
			return &sdk.ElicitResult{Action: "cancel"}, nil
		}
		switch strings.ToLower(strings.TrimSpace(text)) {
		case "y", "yes":
			return &sdk.ElicitResult{Action: "accept", Content: withDefaults(fields, content)}, nil
		case "n", "no":
			return decline, nil
		}
	}
}
