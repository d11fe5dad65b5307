package stage

import (
	"encoding/json"
	"slices"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ask-cli/ask/internal/jsonpos"
)

// callKeys are the keys of a standardized tool call (DESIGN §2).
var callKeys = []string{"id", "name", "arguments"}

// TypedCalls reads tool calls as people type them by hand as well as in the
// standardized form: one call object for an array of one, and arguments as
// a JSON object for the string the form holds. A key the form does not
// have is an error naming the ones it has: a misspelt "argument" must not
// run the tool with no arguments. Anything else is left for Decode to
// place.
func TypedCalls(in Input) (Input, error) {
	if err := in.CheckJSON(); err != nil {
		return in, err
	}
	v := gjson.ParseBytes(in.Data)
	entries := []gjson.Result{v}
	switch {
	case v.IsArray():
		entries = v.Array()
	case !v.IsObject():
		return in, nil
	}
	changed := !v.IsArray()
	out := make([]json.RawMessage, 0, len(entries))
	for i, e := range entries {
		if !e.IsObject() {
			return in, nil
		}
		var unknown gjson.Result
		e.ForEach(func(k, _ gjson.Result) bool {
			if !slices.Contains(callKeys, k.String()) {
				unknown = k
				return false
			}
			return true
		})
		if unknown.Exists() {
			return in, jsonpos.At(in.Name, in.Data, e.Index, "entry %d: unknown key %q: a call has id, name and arguments", i, unknown.String())
		}
		raw := e.Raw
		if args := e.Get("arguments"); args.IsObject() {
			changed = true
			var err error
			if raw, err = sjson.Set(raw, "arguments", args.Raw); err != nil {
				return in, usage(err)
			}
		}
		out = append(out, json.RawMessage(raw))
	}
	if !changed {
		return in, nil // as typed, so that a fault is placed where it is
	}
	data, err := json.Marshal(out)
	if err != nil {
		return in, usage(err)
	}
	return Input{Name: in.Name, Data: data}, nil
}
