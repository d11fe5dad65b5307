package providers

import (
	"encoding/json"
	"strings"
	"testing"
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
