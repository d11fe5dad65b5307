package providertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
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
	specMu      sync.Mutex
	specDefs    = map[string]map[string]*jsonschema.Schema{}
	specSchemas = map[string]*jsonschema.Resolved{}
)

// ValidateSpec validates a request body against components.schemas.NAME of
// an OpenAPI 3.1 file. OpenAPI 3.1 schemas are JSON Schema 2020-12: the
// file's components.schemas become the "$defs" of a schema whose "$ref" is
// the component, with every "#/components/schemas/X" pointed at "$defs";
// OpenAPI's own keywords (nullable, discriminator, x-*) are unknown to the
// validator and ignored. Two constructs are rewritten first (toDraft2020).
// The validator is the product's, github.com/google/jsonschema-go.
func ValidateSpec(t testing.TB, specFile, schemaName string, body []byte) error {
	t.Helper()
	s, err := specSchema(specFile, schemaName)
	if err != nil {
		t.Fatalf("load %s from %s: %v", schemaName, specFile, err)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	return s.Validate(v)
}

const componentsRef = "#/components/schemas/"

func specSchema(specFile, name string) (*jsonschema.Resolved, error) {
	specMu.Lock()
	defer specMu.Unlock()
	key := specFile + "#" + name
	if s, ok := specSchemas[key]; ok {
		return s, nil
	}
	defs, ok := specDefs[specFile]
	if !ok {
		raw, err := os.ReadFile(specFile)
		if err != nil {
			return nil, err
		}
		var doc any
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("parse YAML: %w", err)
		}
		doc = stringKeys(doc)
		schemas, _ := dig(doc, "components", "schemas").(map[string]any)
		for name, sch := range schemas {
			schemas[name] = toDraft2020(sch, componentsRef+name)
		}
		// Round-trip through encoding/json into the validator's types.
		j, err := json.Marshal(schemas)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(j, &defs); err != nil {
			return nil, err
		}
		specDefs[specFile] = defs
	}
	if _, ok := defs[name]; !ok {
		return nil, fmt.Errorf("no components.schemas.%s", name)
	}
	root := &jsonschema.Schema{Defs: defs, Ref: "#/$defs/" + name}
	s, err := root.Resolve(nil)
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

// toDraft2020 points "$ref"s at "$defs" and rewrites what the OpenAI file
// says in other dialects:
//   - draft 2019-09's $recursiveAnchor / $recursiveRef "#" (CompoundFilter,
//     reachable from CreateResponse) become a plain $ref to the enclosing
//     component, which is what they mean there; the 2020-12 metaschema
//     rejects them otherwise;
//   - draft-04's boolean exclusiveMinimum / exclusiveMaximum, which the
//     file uses in places, become the number they qualify;
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
		for _, kw := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
			if b, ok := v[kw[0]].(bool); ok {
				delete(v, kw[0])
				if bound, ok := v[kw[1]]; ok && b {
					delete(v, kw[1])
					v[kw[0]] = bound
				}
			}
		}
		if r, ok := v["$ref"].(string); ok && strings.HasPrefix(r, componentsRef) {
			v["$ref"] = "#/$defs/" + strings.TrimPrefix(r, componentsRef)
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
