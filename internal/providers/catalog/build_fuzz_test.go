package catalog

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// FuzzBuildRequest: whatever the conversation (a message a line of the
// input), every protocol refuses it or builds a body that is valid JSON and
// holds the messages in its conversation, in order and byte for byte
// (gemini's, which joins a role's consecutive turns, only as valid JSON).
func FuzzBuildRequest(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"hi"}`))
	f.Add([]byte(`{"role":"user","content":"a"}` + "\n" + `{"role":"assistant","content":"[]"}`))
	f.Add([]byte(`{"type":"message","role":"user","content":"x"}`))
	f.Add([]byte(`{"role":"user","parts":[{"text":"x"}]}` + "\n" + `{"role":"model","parts":[{"text":"y"}]}`))
	f.Add([]byte(" {\"role\":\"user\",\"content\":\"]\"} \n[]\n1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var msgs []json.RawMessage
		for _, line := range bytes.Split(data, []byte("\n")) {
			msgs = append(msgs, json.RawMessage(line))
		}
		for _, row := range All() {
			if row.LocalProgram {
				continue
			}
			proto, err := row.NewProtocol()
			if err != nil {
				t.Fatal(err)
			}
			body, err := proto.BuildRequest(providers.Request{Model: "m", Messages: msgs, Stream: true})
			if err != nil {
				continue
			}
			if !gjson.ValidBytes(body) {
				t.Fatalf("%s: the body is not valid JSON:\n%s", row.Name, body)
			}
			hist := gjson.GetBytes(body, proto.HistoryField())
			if !hist.IsArray() {
				t.Fatalf("%s: no conversation at %q:\n%s", row.Name, proto.HistoryField(), body)
			}
			if row.Protocol == "gemini" {
				continue
			}
			got := hist.Array()
			if len(got) != len(msgs) {
				t.Fatalf("%s: %d messages in the body, %d given:\n%s", row.Name, len(got), len(msgs), body)
			}
			for i, m := range msgs {
				if got[i].Raw != string(bytes.TrimSpace(m)) {
					t.Fatalf("%s: message %d is %s in the body, %s given", row.Name, i, got[i].Raw, m)
				}
			}
		}
	})
}
