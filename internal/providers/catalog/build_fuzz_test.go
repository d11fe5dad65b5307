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
			proto := remoteProtocol(t, row)
			if proto == nil {
				continue
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

// TestBuildRequestChecksTheUncheckedMessages: every protocol checks the
// messages from Request.Checked on, refusing one that is broken there,
// whatever Checked says (beyond the conversation, or negative), and takes
// the caller's word for those before.
func TestBuildRequestChecksTheUncheckedMessages(t *testing.T) {
	t.Parallel()
	good := json.RawMessage(`{"role":"user","content":"hi","parts":[{"text":"hi"}]}`)
	broken := json.RawMessage(`{"role":`)
	for _, row := range All() {
		proto := remoteProtocol(t, row)
		if proto == nil {
			continue
		}
		for _, tt := range []struct {
			msgs    []json.RawMessage
			checked int
			refuse  bool
		}{
			{[]json.RawMessage{good, good}, 2, false},
			{[]json.RawMessage{good, broken}, 1, true},
			{[]json.RawMessage{broken, good}, 0, true},
			{[]json.RawMessage{broken, good}, -1, true},
			{[]json.RawMessage{good, good}, 5, false},
			{[]json.RawMessage{broken, good}, 1, false}, // vouched for, not checked again
		} {
			_, err := proto.BuildRequest(providers.Request{Model: "m", Messages: tt.msgs, Checked: tt.checked})
			if (err != nil) != tt.refuse {
				t.Errorf("%s: %d messages, %d checked: error %v, want refused %v", row.Name, len(tt.msgs), tt.checked, err, tt.refuse)
			}
		}
	}
}

// remoteProtocol is the protocol of a provider ask reaches over HTTP, nil
// for a local program's.
func remoteProtocol(tb testing.TB, row Provider) providers.Protocol {
	tb.Helper()
	if row.LocalProgram {
		return nil
	}
	proto, err := row.NewProtocol()
	if err != nil {
		tb.Fatal(err)
	}
	return proto
}
