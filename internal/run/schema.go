package run

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/ask-cli/ask/internal/loop"
)

// readSchema reads --schema: inline JSON when the value starts with "{",
// else a file. The schema is compiled now, so that a bad one is a usage
// error before any request is made.
func readSchema(value, wd string) (json.RawMessage, error) {
	raw := []byte(value)
	name := "--schema"
	if !strings.HasPrefix(strings.TrimSpace(value), "{") {
		if value == "" {
			return nil, fault.Usagef("--schema: give a JSON Schema file, or the schema itself starting with {")
		}
		b, err := os.ReadFile(AbsPath(wd, value))
		if err != nil {
			return nil, fault.Usagef("--schema: %v", err)
		}
		raw, name = b, "--schema "+value
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, fault.Usagef("%s: not valid JSON: %v", name, err)
	}
	if compact.Len() == 0 || compact.Bytes()[0] != '{' {
		return nil, fault.Usagef("%s: a JSON Schema for the answer must be a JSON object", name)
	}
	if _, err := loop.CompileSchema(compact.Bytes()); err != nil {
		return nil, fault.Usagef("%s: %v", name, err)
	}
	return compact.Bytes(), nil
}
