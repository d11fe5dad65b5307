package providers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestAppendHistory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		msgs       []string
		want       string
		wantErr    string
	}{
		{name: "appended verbatim, the rest untouched",
			body: `{"model":"m", "messages":[{"role":"user","content":"hi"}],"tools":[ {"x" : 1} ],"stream":true}`,
			msgs: []string{`{"role":"assistant","content":[{"type":"thinking","signature":"c2ln"}]}`, `{"role":"tool","content":"<b>&</b>"}`},
			want: `{"model":"m", "messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","signature":"c2ln"}]},{"role":"tool","content":"<b>&</b>"}],"tools":[ {"x" : 1} ],"stream":true}`},
		{name: "empty conversation", body: `{"messages":[]}`, msgs: []string{`{"a":1}`}, want: `{"messages":[{"a":1}]}`},
		{name: "nothing to add", body: `{"messages":[{"a":1}]}`, want: `{"messages":[{"a":1}]}`},
		{name: "the conversation's spacing kept", body: "{\"messages\": [\n {\"a\": 1}\n ] }", msgs: []string{`{"b":2}`},
			want: "{\"messages\": [\n {\"a\": 1}\n ,{\"b\":2}] }"},
		{name: "an empty conversation with spaces", body: `{"messages":[ ]}`, msgs: []string{`{"b":2}`}, want: `{"messages":[ {"b":2}]}`},
		{name: "no conversation", body: `{"contents":[]}`, wantErr: `the request body has no "messages" array, where echo requests hold the conversation`},
		{name: "not an array", body: `{"messages":"x"}`, wantErr: `no "messages" array`},
		{name: "invalid message", body: `{"messages":[]}`, msgs: []string{`{`}, wantErr: "message 0 to append is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var msgs []json.RawMessage
			for _, m := range tt.msgs {
				msgs = append(msgs, json.RawMessage(m))
			}
			got, err := AppendHistory(echoProtocol{}, []byte(tt.body), msgs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// FuzzAppendHistory: for a valid body, what AppendHistory returns is
// valid JSON whose conversation is the old one and then the message.
func FuzzAppendHistory(f *testing.F) {
	f.Add(`{"messages":[{"role":"user"}]}`, `{"b":2}`)
	f.Add("{\"messages\" : [ \n ] , \"x\":[1]}", `"m"`)
	f.Add(`{"x":{"messages":[]},"messages":[1,[2]]}`, `[3]`)
	f.Fuzz(func(t *testing.T, body, msg string) {
		if !json.Valid([]byte(body)) {
			return
		}
		got, err := AppendHistory(echoProtocol{}, []byte(body), []json.RawMessage{json.RawMessage(msg)})
		if err != nil {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("AppendHistory(%q, %q) = %q, not valid JSON", body, msg, got)
		}
		before := gjson.Get(body, "messages").Array()
		after := gjson.GetBytes(got, "messages").Array()
		if len(after) != len(before)+1 || after[len(before)].Raw != strings.TrimSpace(msg) {
			t.Fatalf("AppendHistory(%q, %q) = %q: the conversation does not end with the message", body, msg, got)
		}
		for i := range before {
			if after[i].Raw != before[i].Raw {
				t.Fatalf("AppendHistory(%q, %q) = %q: message %d changed", body, msg, got, i)
			}
		}
	})
}
