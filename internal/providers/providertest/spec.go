package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// SpecPath returns the path of an official API description in ../shared/specs
// (relative to the repository root). Outside CI the test is skipped when the
// file is absent; in CI, where ../shared is always beside the clone, a
// missing spec fails, so that the spec checks can never pass by not running.
func SpecPath(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	p := filepath.Join(root, "..", "shared", "specs", name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("spec %s not found beside the repository (CI needs ../shared/specs): %v", name, err)
		}
		t.Skipf("spec %s not found beside the repository: %v", name, err)
	}
	return p
}

var (
	specMu       sync.Mutex
	specCompiler = map[string]*jsonschema.Compiler{}
	specSchemas  = map[string]*jsonschema.Schema{}
)

// ValidateSpec validates a request body against components.schemas.NAME of
// an OpenAPI 3.1 file. OpenAPI 3.1 schemas are JSON Schema 2020-12, so the
// whole file is loaded as one schema resource and the component is compiled
// by JSON pointer; OpenAPI's own keywords (nullable, x-*) are unknown to the
// validator and ignored. Two constructs are rewritten first (toDraft2020).
func ValidateSpec(t testing.TB, specFile, schemaName string, body []byte) error {
	t.Helper()
	s, err := specSchema(specFile, schemaName)
	if err != nil {
		t.Fatalf("load %s from %s: %v", schemaName, specFile, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	return s.Validate(v)
}

func specSchema(specFile, name string) (*jsonschema.Schema, error) {
	specMu.Lock()
	defer specMu.Unlock()
	key := specFile + "#" + name
	if s, ok := specSchemas[key]; ok {
		return s, nil
	}
	c, ok := specCompiler[specFile]
	if !ok {
		raw, err := os.ReadFile(specFile)
		if err != nil {
			return nil, err
		}
		var doc any
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("parse YAML: %w", err)
		}
		// Round-trip through encoding/json so that numbers and maps have
		// the types the validator expects.
		doc = stringKeys(doc)
		if schemas, ok := dig(doc, "components", "schemas").(map[string]any); ok {
			for name, sch := range schemas {
				schemas[name] = toDraft2020(sch, "spec.json#/components/schemas/"+name)
			}
		}
		j, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
		if err != nil {
			return nil, err
		}
		c = jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err := c.AddResource("spec.json", v); err != nil {
			return nil, err
		}
		specCompiler[specFile] = c
	}
	s, err := c.Compile("spec.json#/components/schemas/" + name)
	if err != nil {
		return nil, err
	}
	specSchemas[key] = s
	return s, nil
}

// stringKeys converts YAML maps with non-string keys (such as response codes
// written as bare 200) into JSON objects.
func stringKeys(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = stringKeys(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = stringKeys(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = stringKeys(e)
		}
		return v
	}
	return v
}

// toDraft2020 rewrites what the OpenAI file says in other dialects:
//   - draft 2019-09's $recursiveAnchor / $recursiveRef "#" (CompoundFilter,
//     reachable from CreateResponse) become a plain $ref to the enclosing
//     component, which is what they mean there; the 2020-12 metaschema
//     rejects them otherwise;
//   - a oneOf with an OpenAPI discriminator becomes anyOf: the
//     discriminator picks one branch, while plain JSON Schema demands that
//     exactly one match, which a user message with input_text parts (it fits
//     EasyInputMessage and InputMessage) cannot do. anyOf still rejects a
//     value that fits no branch.
func toDraft2020(v any, self string) any {
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
			v[k] = toDraft2020(e, self)
		}
	case []any:
		for i, e := range v {
			v[i] = toDraft2020(e, self)
		}
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
