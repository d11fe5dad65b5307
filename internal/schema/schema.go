// Package schema compiles and applies the JSON Schemas ask validates with:
// a --schema for the final answer and the parameters of every tool. It
// wraps github.com/google/jsonschema-go, which the MCP SDK links into the
// binary anyway, so that ask has one validator and pays one package init.
//
// That library resolves a schema but does not check it against its
// meta-schema, so Compile adds the checks that catch the mistakes people
// make (see Compile). It does not assert "format", and it reports the
// first violation it finds, not all of them.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is a compiled JSON Schema. It is safe for concurrent use.
type Schema struct {
	resolved *jsonschema.Resolved
}

// baseURI names the schema while it is resolved; it never leaves here. A
// relative "$ref" resolves against it and is refused like any other
// reference outside the schema.
const baseURI = "https://ask.invalid/schema.json"

// The "$schema" values the validator implements; a schema without one is
// read as draft 2020-12.
var drafts = map[string]bool{
	"https://json-schema.org/draft/2020-12/schema":  true,
	"https://json-schema.org/draft/2020-12/schema#": true,
	"http://json-schema.org/draft-07/schema#":       true,
	"http://json-schema.org/draft-07/schema":        true,
	"https://json-schema.org/draft-07/schema#":      true,
}

// jsonTypes are the values "type" may name.
var jsonTypes = map[string]bool{
	"array": true, "boolean": true, "integer": true, "null": true,
	"number": true, "object": true, "string": true,
}

// Compile reads and resolves a JSON Schema. Beyond what the library
// checks (keyword values of the wrong JSON type, patterns that are not
// regular expressions, references that lead nowhere), it refuses:
//
//   - a document that is not one JSON object or boolean;
//   - a "$schema" other than draft 2020-12 or draft-07, the drafts the
//     validator implements;
//   - a "type", anywhere in the schema, that is not one of the seven JSON
//     types (a misspelt type would otherwise reject every value);
//   - an array of schemas as "items" outside draft-07: draft 2020-12 says
//     "prefixItems", and the library would ignore the array;
//   - any "$ref" outside the schema: nothing is loaded from files or the
//     network.
//
// It is not a full check against the meta-schema: an unknown keyword, for
// one, is ignored as the specification says.
func Compile(raw []byte) (*Schema, error) {
	return compile(raw, baseURI, refuseLoad)
}

// compile is Compile with the base URI and the loader of references that
// leave the schema; the JSON Schema Test Suite gives its own.
func compile(raw []byte, base string, load jsonschema.Loader) (*Schema, error) {
	doc, err := Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	obj, isObj := doc.(map[string]any)
	if _, isBool := doc.(bool); !isObj && !isBool {
		return nil, errors.New("a JSON Schema is an object (or true/false)")
	}
	if v, ok := obj["$schema"]; ok {
		if s, _ := v.(string); !drafts[s] {
			return nil, fmt.Errorf(`"$schema" %s: only draft 2020-12 (https://json-schema.org/draft/2020-12/schema) and draft-07 (http://json-schema.org/draft-07/schema#) are supported`, compact(v))
		}
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errors.New(unmarshalProblem(err))
	}
	draft07 := strings.Contains(s.Schema, "draft-07")
	if err := checkKeywords(&s, "", draft07); err != nil {
		return nil, err
	}
	r, err := s.Resolve(&jsonschema.ResolveOptions{BaseURI: base, Loader: load})
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), "jsonschema.Schema: <anonymous schema>: ", "")
		msg = strings.ReplaceAll(msg, "https://ask.invalid/", "")
		return nil, errors.New(oneLine(msg))
	}
	return &Schema{resolved: r}, nil
}

// refuseLoad is the loader of every reference that leaves the schema.
func refuseLoad(u *url.URL) (*jsonschema.Schema, error) {
	return nil, errors.New("only references inside the schema are followed; nothing is loaded from files or the network")
}

// unmarshalProblem rewords encoding/json's error for a keyword whose value
// has the wrong type ("Go struct field .schemaWithoutMethods.required of
// type []string") as the keyword and the JSON type it needs.
func unmarshalProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		want := "a " + te.Type.Kind().String()
		switch te.Type.Kind() {
		case reflect.Slice, reflect.Array:
			want = "an array"
		case reflect.Map, reflect.Struct, reflect.Pointer:
			want = "an object"
		case reflect.Float32, reflect.Float64:
			want = "a number"
		case reflect.Int, reflect.Int64:
			want = "an integer"
		}
		field := te.Field[strings.LastIndexByte(te.Field, '.')+1:]
		return fmt.Sprintf("%q must be %s, got %s", field, want, te.Value)
	}
	return oneLine(strings.TrimPrefix(err.Error(), "json: "))
}

// checkKeywords refuses a "type" that names no JSON type, and a draft-07
// "items" array in draft 2020-12, in s or any schema inside it; at is s's
// JSON pointer.
func checkKeywords(s *jsonschema.Schema, at string, draft07 bool) error {
	if s == nil {
		return nil
	}
	for _, t := range append([]string{s.Type}, s.Types...) {
		if t != "" && !jsonTypes[t] {
			return fmt.Errorf(`at %s/type: %q is not a JSON type (array, boolean, integer, null, number, object, string)`, at, t)
		}
	}
	if s.ItemsArray != nil && !draft07 {
		return fmt.Errorf(`at %s/items: an array of schemas is draft-07; in draft 2020-12 "items" is one schema and the tuple is "prefixItems"`, at)
	}
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		name := keyword(v.Type().Field(i))
		switch f := v.Field(i).Interface().(type) {
		case *jsonschema.Schema:
			if err := checkKeywords(f, at+"/"+name, draft07); err != nil {
				return err
			}
		case []*jsonschema.Schema:
			for j, sub := range f {
				if err := checkKeywords(sub, fmt.Sprintf("%s/%s/%d", at, name, j), draft07); err != nil {
					return err
				}
			}
		case map[string]*jsonschema.Schema:
			for k, sub := range f {
				if err := checkKeywords(sub, at+"/"+name+"/"+k, draft07); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// keyword is the JSON name of a field of jsonschema.Schema.
func keyword(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		switch f.Name {
		case "Items", "ItemsArray":
			return "items"
		case "DependencySchemas":
			return "dependencies"
		}
		return f.Name
	}
	return name
}

// Decode reads one JSON value, with numbers as float64 as the validator
// expects them.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v any
	if err := dec.Decode(&v); err != nil {
		if err == io.EOF {
			return nil, errors.New("no JSON value")
		}
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// Violation is a value that does not match the schema: At is the JSON
// pointer of the part of the schema it fails ("/properties/age"; "/" for
// the whole schema) and Problem what is wrong, as the library words it
// (`type: many has type "string", want "integer"`).
type Violation struct {
	At, Problem string
}

func (v *Violation) Error() string { return "at " + v.At + ": " + v.Problem }

// Validate checks a value decoded by Decode. It returns nil or a
// *Violation.
func (s *Schema) Validate(v any) error {
	err := s.resolved.Validate(v)
	if err == nil {
		return nil
	}
	return violation(err.Error())
}

// violation reads the library's error, "validating root: validating
// /properties/age: type: ...", one "validating" per schema on the way.
func violation(msg string) *Violation {
	at := "/"
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		where, problem, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		if where != "root" {
			at = strings.TrimPrefix(where, baseURI)
			if at == "" || at[0] != '/' {
				at = where
			}
		}
		msg = problem
	}
	return &Violation{At: at, Problem: oneLine(msg)}
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
