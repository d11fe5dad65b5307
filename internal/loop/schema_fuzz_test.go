package loop

import (
	"encoding/json"
	"testing"
)

// FuzzCheck feeds arbitrary answers to the validator: it must never panic,
// and an accepted answer must be JSON that passes again unchanged.
func FuzzCheck(f *testing.F) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{`{"n":1}`, "```json\n{\"n\":2}\n```", "```\n```", "``````", `{"n":"x"}`, "", "```json\n", `[1]`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		got, err := s.Check(answer)
		if err != nil {
			return
		}
		if !json.Valid([]byte(got)) {
			t.Fatalf("accepted %q as %q, which is not JSON", answer, got)
		}
		if again, err := s.Check(got); err != nil || again != got {
			t.Fatalf("accepted answer %q does not pass again: %q, %v", got, again, err)
		}
	})
}

// FuzzCompileSchema: any bytes either compile or give a one-line error.
func FuzzCompileSchema(f *testing.F) {
	for _, seed := range []string{`{}`, `true`, `{"type":"strin"}`, `{"$ref":"#/x"}`, `{"$ref":"other.json"}`, `{"properties":{"a":{"$ref":"#"}}}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		if _, err := CompileSchema(json.RawMessage(schema)); err != nil {
			for _, c := range err.Error() {
				if c == '\n' {
					t.Fatalf("multi-line error for %q: %q", schema, err)
				}
			}
		}
	})
}
