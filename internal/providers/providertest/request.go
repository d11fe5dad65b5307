package providertest

import (
	"encoding/json"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
)

// Spec names the schema a protocol's request bodies match in an official
// API description (../shared/specs); the zero Spec, for a protocol
// without one, validates nothing.
type Spec struct {
	File, Schema string
	// Refused is a body the schema must refuse, so that a validator that
	// checks nothing is noticed.
	Refused string
}

// Check fails the test unless body matches the spec.
func (s Spec) Check(t testing.TB, what string, body []byte) {
	t.Helper()
	if s.File == "" {
		return
	}
	path := SpecPath(t, s.File)
	if s.Refused != "" {
		if err := ValidateSpec(t, path, s.Schema, []byte(s.Refused)); err == nil {
			t.Fatalf("%s accepted %s: the validator checks nothing", s.Schema, s.Refused)
		}
	}
	if err := ValidateSpec(t, path, s.Schema, body); err != nil {
		t.Errorf("%s: the request does not match %s: %v\n%s", what, s.Schema, err, Indent(body))
	}
}

// AttachedRequest is the body p builds around msg, a prompt with files,
// checked against spec.
func AttachedRequest(t testing.TB, p providers.Protocol, spec Spec, msg json.RawMessage) []byte {
	t.Helper()
	body, err := p.BuildRequest(providers.Request{Model: "some-model", System: "be brief", Messages: []json.RawMessage{msg}})
	if err != nil {
		t.Fatal(err)
	}
	spec.Check(t, "a prompt with files", body)
	return body
}

// KnobsWithAttachment checks what -a with --temperature, and -a with
// --reasoning, make of a first request of p to model (one that thinks):
// goldens knobs/temperature-attachment and knobs/reasoning-attachment,
// each checked against spec.
func KnobsWithAttachment(t *testing.T, p providers.Protocol, model string, spec Spec) {
	t.Helper()
	user, err := p.UserMessage("what is in this picture?", Attachment(t, "pixel.png"))
	if err != nil {
		t.Fatal(err)
	}
	temperature := 0.3
	for name, r := range map[string]providers.Request{
		"knobs/temperature-attachment": {Temperature: &temperature},
		"knobs/reasoning-attachment":   {Reasoning: "medium"},
	} {
		r.Model, r.System, r.Messages = model, "be brief", []json.RawMessage{user}
		body, err := p.BuildRequest(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		Golden(t, name, body)
		spec.Check(t, name, body)
	}
}
