package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/tidwall/gjson"
)

// CheckArguments refuses arguments that two readers could read two ways.
// The tools decode with encoding/json, which matches a key regardless of
// case and keeps the last of duplicates; the policy, its rules and the
// approval prompt look keys up exactly. {"command": "git status",
// "Command": "touch x"} would be approved as one command and run as
// another. So a duplicate key, two keys that differ only in case (at any
// depth), or a key that the schema's properties do not declare is an
// error, and the call never reaches the gate or the tool: then every
// reader sees the one value there is.
//
// A schema that lists no properties, or allows additional ones, accepts
// any key that is not a duplicate.
func CheckArguments(params json.RawMessage, arguments string) error {
	args := strings.TrimSpace(arguments)
	if args == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil // not JSON: the tool's own check says so
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil // not an object: likewise
	}
	declared, strict := declaredKeys(params)
	err = checkObject(dec, func(key string) error {
		if !strict || declared[key] {
			return nil
		}
		for d := range declared {
			if strings.EqualFold(d, key) {
				return fmt.Errorf("key %q differs from the parameter %q only in case; send %q", key, d, d)
			}
		}
		return fmt.Errorf("key %q is not a parameter of this tool; the parameters are: %s", key, strings.Join(slices.Sorted(maps.Keys(declared)), ", "))
	})
	if errors.Is(err, errNotJSON) {
		return nil // the tool's own check says so
	}
	return err
}

// errNotJSON stops the reading at the first syntax error: the decoder
// stays at the bad byte, so More would go on saying there is more, and a
// loop over the members would never end.
var errNotJSON = errors.New("arguments are not JSON")

// declaredKeys reads the property names of a parameters schema, and
// whether only those are allowed.
func declaredKeys(params json.RawMessage) (map[string]bool, bool) {
	schema := gjson.ParseBytes(bytes.TrimSpace(params))
	props := schema.Get("properties")
	if !props.IsObject() {
		return nil, false
	}
	if extra := schema.Get("additionalProperties"); extra.Exists() && extra.Type != gjson.False || schema.Get("patternProperties").Exists() {
		return nil, false
	}
	declared := map[string]bool{}
	props.ForEach(func(k, _ gjson.Result) bool {
		declared[k.String()] = true
		return true
	})
	return declared, true
}

// checkObject reads the members of an object whose '{' was just read,
// checking its keys and those of every object nested in it; topLevel
// checks each key of this object against the schema.
func checkObject(dec *json.Decoder, topLevel func(string) error) error {
	seen := map[string]string{} // folded key → the key as written
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errNotJSON
		}
		key, _ := tok.(string)
		switch earlier, dup := seen[foldKey(key)]; {
		case dup && earlier == key:
			return fmt.Errorf("key %q appears twice; send each key once", key)
		case dup:
			return fmt.Errorf("keys %q and %q differ only in case; send one of them", earlier, key)
		}
		seen[foldKey(key)] = key
		if topLevel != nil {
			if err := topLevel(key); err != nil {
				return err
			}
		}
		if err := checkValue(dec); err != nil {
			return err
		}
	}
	dec.Token() // the closing '}'
	return nil
}

// checkValue reads one value, checking the keys of the objects in it.
func checkValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return errNotJSON
	}
	d, ok := tok.(json.Delim)
	switch {
	case !ok:
		return nil
	case d == '{':
		return checkObject(dec, nil)
	case d == '[':
		for dec.More() {
			if err := checkValue(dec); err != nil {
				return err
			}
		}
		dec.Token() // the closing ']'
	}
	return nil
}

// foldKey maps every spelling of a key that a case-insensitive match
// (strings.EqualFold, a superset of encoding/json's) takes for the same
// to one string: each rune becomes the smallest of its case orbit, so
// "K", "k" and the Kelvin sign meet.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}
