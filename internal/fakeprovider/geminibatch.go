package fakeprovider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// GeminiBatches is the Gemini API's Batch Mode with inline requests, as
// its documentation describes it (the shapes and sources are in
// internal/batch/testdata/PROVENANCE.md): POST
// /v1beta/models/{model}:batchGenerateContent takes {"batch":
// {"display_name", "input_config": {"requests": {"requests": [{"request",
// "metadata"}]}}}} and answers a long-running operation named
// "batches/{id}"; GET /v1beta/batches/{id} reads it, metadata.state
// BATCH_STATE_PENDING, then RUNNING, then SUCCEEDED with done true and the
// replies in response.inlinedResponses.inlinedResponses, in input order,
// each {"response"} or {"error"} with the request's metadata. A
// generateContent request sent directly is refused.
type GeminiBatches struct {
	*httptest.Server
	// Answer is the model: a reply to one GenerateContentRequest.
	Answer func(request []byte) Reply
	// Fail gives the gRPC code of an error in place of the reply to the
	// request with metadata key of round 1, 2, …; 0 answers it.
	Fail func(round int, key string) int
	// Expire reports whether round 1, 2, … ends BATCH_STATE_EXPIRED with
	// no replies.
	Expire func(round int) bool
	// Polls is how many reads a batch stays running.
	Polls int

	mu      sync.Mutex
	batches map[string]*geminiBatch
	// Creates are the bodies of the batches' creation and Paths their
	// URL paths; Headers the creation's headers; Direct counts the
	// generateContent requests sent around the batches.
	Creates [][]byte
	Paths   []string
	Headers []http.Header
	Direct  int
}

type geminiBatch struct {
	round int
	polls int
	model string
	body  []byte
	done  map[string]any // the finished operation, once read
}

// StartGeminiBatches serves Batch Mode on 127.0.0.1.
func StartGeminiBatches(answer func(request []byte) Reply) *GeminiBatches {
	g := &GeminiBatches{Answer: answer, Polls: 1, batches: map[string]*geminiBatch{}}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	return g
}

// Mu guards Creates, Paths, Headers and Direct.
func (g *GeminiBatches) Mu() *sync.Mutex { return &g.mu }

func (g *GeminiBatches) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, ":generateContent"):
		g.mu.Lock()
		g.Direct++
		g.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, geminiError(400, "fake gemini batches: a direct request"))
	case r.Method == http.MethodPost && strings.HasSuffix(path, ":batchGenerateContent"):
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Batch struct {
				DisplayName string `json:"display_name"`
				InputConfig struct {
					Requests struct {
						Requests []json.RawMessage `json:"requests"`
					} `json:"requests"`
				} `json:"input_config"`
			} `json:"batch"`
		}
		if json.Unmarshal(body, &req) != nil || req.Batch.DisplayName == "" || len(req.Batch.InputConfig.Requests.Requests) == 0 {
			writeJSON(w, http.StatusBadRequest, geminiError(400, "fake gemini batches: want batch.display_name and batch.input_config.requests.requests"))
			return
		}
		model := strings.TrimSuffix(path[strings.Index(path, "/models/")+1:], ":batchGenerateContent")
		g.mu.Lock()
		g.Creates = append(g.Creates, body)
		g.Paths = append(g.Paths, path)
		g.Headers = append(g.Headers, r.Header.Clone())
		id := fmt.Sprintf("batches/fake%d", len(g.batches)+1)
		b := &geminiBatch{round: len(g.batches) + 1, model: model, body: body}
		g.batches[id] = b
		g.mu.Unlock()
		writeJSON(w, http.StatusOK, g.operation(id, b, "BATCH_STATE_PENDING"))
	case r.Method == http.MethodGet && strings.Contains(path, "/batches/"):
		id := path[strings.Index(path, "/batches/")+1:]
		g.mu.Lock()
		b, ok := g.batches[id]
		if ok {
			b.polls++
		}
		g.mu.Unlock()
		switch {
		case !ok:
			writeJSON(w, http.StatusNotFound, geminiError(404, "no such batch"))
		case b.polls <= g.Polls:
			writeJSON(w, http.StatusOK, g.operation(id, b, "BATCH_STATE_RUNNING"))
		default:
			writeJSON(w, http.StatusOK, g.finish(id, b))
		}
	default:
		writeJSON(w, http.StatusNotFound, geminiError(404, "fake gemini batches: no route "+r.Method+" "+path))
	}
}

// operation is the batch as an operation whose metadata is the batch.
func (g *GeminiBatches) operation(id string, b *geminiBatch, state string) map[string]any {
	return map[string]any{"name": id, "metadata": map[string]any{
		"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
		"name":  id, "model": b.model, "displayName": "ask-batch-round", "state": state,
		"createTime": "2026-11-27T07:00:00Z", "updateTime": "2026-11-27T07:00:01Z",
	}}
}

// finish answers every request of the batch, once.
func (g *GeminiBatches) finish(id string, b *geminiBatch) map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	if b.done != nil {
		return b.done
	}
	op := g.operation(id, b, "BATCH_STATE_SUCCEEDED")
	op["done"] = true
	if g.Expire != nil && g.Expire(b.round) {
		op["metadata"].(map[string]any)["state"] = "BATCH_STATE_EXPIRED"
		b.done = op
		return op
	}
	var req struct {
		Batch struct {
			InputConfig struct {
				Requests struct {
					Requests []struct {
						Request  json.RawMessage `json:"request"`
						Metadata map[string]any  `json:"metadata"`
					} `json:"requests"`
				} `json:"requests"`
			} `json:"input_config"`
		} `json:"batch"`
	}
	json.Unmarshal(b.body, &req)
	var items []any
	for _, q := range req.Batch.InputConfig.Requests.Requests {
		key, _ := q.Metadata["key"].(string)
		item := map[string]any{"metadata": q.Metadata}
		if g.Fail != nil && g.Fail(b.round, key) != 0 {
			item["error"] = map[string]any{"code": g.Fail(b.round, key), "message": "fake gemini batches: this request failed"}
		} else {
			item["response"] = json.RawMessage(GenerateContentJSON(g.Answer(q.Request)))
		}
		items = append(items, item)
	}
	out := map[string]any{"inlinedResponses": map[string]any{"inlinedResponses": items}}
	op["metadata"].(map[string]any)["output"] = out
	op["response"] = map[string]any{"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput",
		"inlinedResponses": out["inlinedResponses"]}
	b.done = op
	return op
}

func geminiError(code int, msg string) map[string]any {
	status := "INVALID_ARGUMENT"
	if code == 404 {
		status = "NOT_FOUND"
	}
	return map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}}
}

// GenerateContentJSON renders a reply as a Gemini generateContent body.
func GenerateContentJSON(r Reply) []byte {
	parts := []any{}
	if r.Text != "" {
		parts = append(parts, map[string]any{"text": r.Text})
	}
	for _, c := range r.Calls {
		args := json.RawMessage(c.Arguments)
		if !json.Valid(args) {
			args = json.RawMessage(`{}`)
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args}})
	}
	b, _ := json.Marshal(map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]int{"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
		"modelVersion":  "fake-model",
	})
	return b
}
