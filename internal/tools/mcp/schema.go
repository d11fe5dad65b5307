package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ask-cli/ask/internal/schema"
)

// emptyObject is the schema of a tool that takes no arguments.
const emptyObject = `{"type":"object","properties":{}}`

// cleanSchema turns a server's inputSchema into parameters every provider
// accepts and ask's registry can compile:
//
//   - "$schema", "$id" and "$comment" go: the reference servers send
//     "$schema": draft-07 on every tool, and Gemini rejects the key;
//   - the top level is an object schema with "properties", which OpenAI
//     requires even when there are none;
//   - a schema that is not an object schema, or that does not compile, is
//     replaced by an empty object schema, and the note says why (the server
//     still checks the arguments it receives).
func cleanSchema(input any) (params json.RawMessage, note string) {
	raw, err := json.Marshal(input)
	if err != nil || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage(emptyObject), ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return json.RawMessage(emptyObject), "its input schema is not JSON"
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return json.RawMessage(emptyObject), "its input schema is not a JSON object"
	}
	delete(obj, "$schema")
	delete(obj, "$id")
	dropKey(obj, "$comment")
	switch t := obj["type"]; t {
	case nil:
		obj["type"] = "object"
	case "object":
	default:
		return json.RawMessage(emptyObject), fmt.Sprintf("its input schema has type %v, not object", t)
	}
	if _, ok := obj["properties"]; !ok {
		obj["properties"] = map[string]any{}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return json.RawMessage(emptyObject), "its input schema cannot be encoded"
	}
	if err := compiles(out); err != nil {
		return json.RawMessage(emptyObject), "its input schema is not valid JSON Schema: " + err.Error()
	}
	return out, ""
}

// dropKey removes key from every object of the tree, except as the name of
// a property (a parameter may well be called "$comment").
func dropKey(v any, key string) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, key)
		for k, child := range v {
			if k == "properties" || k == "patternProperties" || k == "$defs" || k == "definitions" || k == "dependentSchemas" {
				if m, ok := child.(map[string]any); ok {
					for _, s := range m {
						dropKey(s, key)
					}
					continue
				}
			}
			dropKey(child, key)
		}
	case []any:
		for _, child := range v {
			dropKey(child, key)
		}
	}
}

// compiles checks params the way the registry will compile them (no file
// or network access for "$ref").
func compiles(params []byte) error {
	_, err := schema.Compile(params)
	return err
}
