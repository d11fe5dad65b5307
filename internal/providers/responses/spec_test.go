package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/ask-cli/ask/internal/providers/providertest"
)

// The shared providertest.ValidateSpec cannot compile CreateResponse: the
// OpenAI file's CompoundFilter and BetaCompoundFilter (file-search filters,
// reachable from CreateResponse through the tools union) use the draft
// 2019-09 keywords $recursiveAnchor: true and $recursiveRef: "#", which the
// 2020-12 metaschema rejects ("got boolean, want string"). Until that helper
// learns to cope, this file loads the spec the same way and rewrites those two
// keywords into the plain $ref they mean: a reference to the enclosing
// component.
//
// It also reads a oneOf that carries an OpenAPI discriminator as anyOf. In
// OpenAPI the discriminator picks the one branch to apply; plain JSON Schema
// ignores it and demands that exactly one branch match, which some valid
// items cannot do: a user message with input_text parts and no "type"
// matches both EasyInputMessage and InputMessage, so the recorded fantasy
// requests would fail. anyOf still rejects an item that fits no branch
// (TestSpecRejects proves it). Nothing else in the file is touched.

var (
	specOnce   sync.Once
	specSchema *jsonschema.Schema
	specErr    error
)

// validateCreateResponse validates a request body against
// components.schemas.CreateResponse of the official OpenAPI file.
func validateCreateResponse(t testing.TB, body []byte) error {
	t.Helper()
	path := providertest.SpecPath(t, "openai-openapi.yaml")
	specOnce.Do(func() { specSchema, specErr = compileCreateResponse(path) })
	if specErr != nil {
		t.Fatalf("load CreateResponse from %s: %v", path, specErr)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	return specSchema.Validate(v)
}

func compileCreateResponse(path string) (*jsonschema.Schema, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	doc = jsonKeys(doc)
	schemas, _ := dig(doc, "components", "schemas").(map[string]any)
	for name, s := range schemas {
		schemas[name] = unrecurse(s, "#/components/schemas/"+name)
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("spec.json", v); err != nil {
		return nil, err
	}
	return c.Compile("spec.json#/components/schemas/CreateResponse")
}

// unrecurse drops $recursiveAnchor, turns $recursiveRef "#" into a $ref to
// the component it sits in, and a discriminated oneOf into anyOf.
func unrecurse(v any, self string) any {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "$recursiveAnchor")
		if branches, ok := v["oneOf"]; ok && v["discriminator"] != nil {
			delete(v, "oneOf")
			v["anyOf"] = branches
		}
		if r, ok := v["$recursiveRef"]; ok && r == "#" {
			delete(v, "$recursiveRef")
			v["$ref"] = self
		}
		for k, e := range v {
			v[k] = unrecurse(e, self)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = unrecurse(e, self)
		}
		return v
	}
	return v
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// jsonKeys turns YAML maps with non-string keys (bare response codes) into
// JSON objects.
func jsonKeys(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = jsonKeys(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = jsonKeys(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = jsonKeys(e)
		}
		return v
	}
	return v
}
