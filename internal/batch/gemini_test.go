package batch

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestGeminiModelOf(t *testing.T) {
	t.Parallel()
	if got := escapeModel("models/m/a"); got != "models/m%2Fa" {
		t.Errorf("escapeModel: %s", got)
	}
	tests := []struct {
		method, url string
		model       string
		ok          bool
	}{
		{"POST", "https://g.example/v1beta/models/gemini-2.5-flash:generateContent", "models/gemini-2.5-flash", true},
		{"POST", "https://g.example/v1beta/models/m%2Fa:generateContent", "models/m/a", true},
		{"POST", "https://g.example/v1beta/tunedModels/my-model:generateContent", "tunedModels/my-model", true},
		{"POST", "https://g.example/:generateContent", "", false},
		{"POST", "https://g.example/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "", false},
		{"GET", "https://g.example/v1beta/models/gemini-2.5-flash:generateContent", "", false},
		{"POST", "https://g.example/v1beta/models/gemini-2.5-flash:countTokens", "", false},
		{"POST", "https://g.example/v1beta/files", "", false},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.url, nil)
		model, ok := geminiModelOf(req)
		if ok != tt.ok || model != tt.model {
			t.Errorf("%s %s: %q %v, want %q %v", tt.method, tt.url, model, ok, tt.model, tt.ok)
		}
	}
}

// TestGeminiHeldBodyNamesItsModel: the body a round holds is the request's
// own with its model, so that a round of several models is split right.
func TestGeminiHeldBodyNamesItsModel(t *testing.T) {
	t.Parallel()
	tests := []struct{ body, want string }{
		{`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, `{"model":"models/m","contents":[{"role":"user","parts":[{"text":"hi"}]}]}`},
		{` { } `, `{"model":"models/m"}`},
		{`{"model":"models/other","contents":[]}`, `{"model":"models/other","contents":[]}`},
		{`not json`, `not json`},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(http.MethodPost, "https://g.example/v1beta/models/m:generateContent", bytes.NewReader([]byte(tt.body)))
		if !(geminiBatches{}).model(req) {
			t.Fatalf("%s: not taken", tt.body)
		}
		got, _ := io.ReadAll(req.Body)
		if string(got) != tt.want {
			t.Errorf("%s: held %s, want %s", tt.body, got, tt.want)
		}
		if json.Valid([]byte(tt.body)) && !json.Valid(got) {
			t.Errorf("%s: held %s is not JSON", tt.body, got)
		}
	}
}

func TestGeminiResults(t *testing.T) {
	t.Parallel()
	op := `{"name":"batches/b1","done":true,"metadata":{"state":"BATCH_STATE_SUCCEEDED"},"response":{"inlinedResponses":{"inlinedResponses":[
		{"response":{"candidates":[]},"metadata":{"key":"0"}},
		{"error":{"code":14,"message":"unavailable"},"metadata":{"key":"1"}},
		{"error":{"code":3,"message":"bad request"},"metadata":{"key":"2"}},
		{"response":{"candidates":[]}}]}}}`
	var o geminiOperation
	if err := json.Unmarshal([]byte(op), &o); err != nil {
		t.Fatal(err)
	}
	answers := map[string]Reply{}
	if err := inlineReplies(&o, answers); err != nil {
		t.Fatal(err)
	}
	if a, ok := answers["0"]; !ok || a.Status != 200 {
		t.Errorf("key 0: %+v, want the reply", a)
	}
	if _, ok := answers["1"]; ok {
		t.Errorf("key 1 (UNAVAILABLE) answered; it should go again")
	}
	if a := answers["2"]; a.Status != 400 || !bytes.Contains(a.Body, []byte("bad request")) {
		t.Errorf("key 2: %d %s, want a 400 with the message", a.Status, a.Body)
	}
	if len(answers) != 2 {
		t.Errorf("%d answers, want 2", len(answers))
	}

	expired := geminiOperation{Name: "batches/b2", Done: true}
	expired.Metadata.State = "BATCH_STATE_EXPIRED"
	if err := inlineReplies(&expired, map[string]Reply{}); err != nil {
		t.Errorf("an expired batch without output: %v; its requests should go again", err)
	}
	succeeded := geminiOperation{Name: "batches/b3", Done: true}
	succeeded.Metadata.State = "BATCH_STATE_SUCCEEDED"
	if err := inlineReplies(&succeeded, map[string]Reply{}); err == nil {
		t.Error("a succeeded batch without output read as nothing to say")
	}
}

// FuzzGeminiResults: whatever a finished batch holds, reading it does not
// panic, and every answer is for a key the batch named, with a status.
func FuzzGeminiResults(f *testing.F) {
	f.Add([]byte(`{"name":"batches/b","done":true,"response":{"inlinedResponses":{"inlinedResponses":[{"response":{},"metadata":{"key":"0"}}]}}}`))
	f.Add([]byte(`{"metadata":{"state":"BATCH_STATE_FAILED","output":{"inlinedResponses":{"inlinedResponses":[{"error":{"code":99},"metadata":{"key":"7"}}]}}}}`))
	f.Add([]byte(`{"response":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var o geminiOperation
		if json.Unmarshal(data, &o) != nil {
			return
		}
		answers := map[string]Reply{}
		_ = inlineReplies(&o, answers)
		named := map[string]bool{}
		for _, out := range []*geminiOutput{o.Response, o.Metadata.Output} {
			if out != nil {
				for _, item := range out.InlinedResponses.InlinedResponses {
					named[item.Metadata.Key] = true
				}
			}
		}
		for key, a := range answers {
			if key == "" || a.Status < 100 || a.Status > 599 {
				t.Fatalf("answer %q: status %d", key, a.Status)
			}
			if !named[key] {
				t.Fatalf("answer for key %q the batch did not name", key)
			}
		}
	})
}
