package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// MessageBatches is Anthropic's Message Batches API as its documentation
// describes it (the shapes are in internal/batch/testdata/PROVENANCE.md):
// POST /v1/messages/batches takes {"requests": [{"custom_id", "params"}]},
// GET /v1/messages/batches/{id} reports processing_status until "ended"
// with a results_url, which serves one JSON line a request:
// {"custom_id", "result": {"type": "succeeded", "message"} or {"type":
// "expired"}}. Messages requests sent directly are refused.
type MessageBatches struct {
	*httptest.Server
	Answer func(params []byte) Reply
	// Expire reports whether the request custom_id of round 1, 2, …
	// expires.
	Expire func(round int, customID string) bool
	// Polls is how many reads a batch stays in_progress.
	Polls int

	mu      sync.Mutex
	batches map[string]*msgBatch
	// Creates are the bodies of the batches' creation; Direct counts
	// requests to /messages; Headers the creation's headers.
	Creates [][]byte
	Headers []http.Header
	Direct  int
}

type msgBatch struct {
	round   int
	polls   int
	body    []byte
	results []byte
}

// StartMessageBatches serves Message Batches on 127.0.0.1.
func StartMessageBatches(answer func(params []byte) Reply) *MessageBatches {
	m := &MessageBatches{Answer: answer, Polls: 1, batches: map[string]*msgBatch{}}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	return m
}

// Mu guards Creates, Headers and Direct.
func (m *MessageBatches) Mu() *sync.Mutex { return &m.mu }

func (m *MessageBatches) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		m.mu.Lock()
		m.Direct++
		m.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, anthropicError("fake message batches: a direct request"))
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/batches"):
		body, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.Creates = append(m.Creates, body)
		m.Headers = append(m.Headers, r.Header.Clone())
		id := fmt.Sprintf("msgbatch_%d", len(m.batches)+1)
		b := &msgBatch{round: len(m.batches) + 1, body: body}
		m.batches[id] = b
		m.mu.Unlock()
		writeJSON(w, http.StatusOK, m.object(id, b, ""))
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/results"):
		id := strings.TrimSuffix(path, "/results")
		id = id[strings.LastIndex(id, "/")+1:]
		m.mu.Lock()
		b, ok := m.batches[id]
		m.mu.Unlock()
		if !ok || b.results == nil {
			writeJSON(w, http.StatusNotFound, anthropicError("no results"))
			return
		}
		w.Header().Set("Content-Type", "application/binary")
		w.Write(b.results)
	case r.Method == http.MethodGet && strings.Contains(path, "/messages/batches/"):
		id := path[strings.LastIndex(path, "/")+1:]
		m.mu.Lock()
		b, ok := m.batches[id]
		if ok {
			b.polls++
		}
		m.mu.Unlock()
		if !ok {
			writeJSON(w, http.StatusNotFound, anthropicError("no such batch"))
			return
		}
		if b.polls <= m.Polls {
			writeJSON(w, http.StatusOK, m.object(id, b, ""))
			return
		}
		m.finish(b)
		writeJSON(w, http.StatusOK, m.object(id, b, "http://"+r.Host+"/v1/messages/batches/"+id+"/results"))
	default:
		writeJSON(w, http.StatusNotFound, anthropicError("fake message batches: no route "+r.Method+" "+path))
	}
}

// finish answers every request of the batch, once.
func (m *MessageBatches) finish(b *msgBatch) {
	m.mu.Lock()
	done := b.results != nil
	m.mu.Unlock()
	if done {
		return
	}
	var req struct {
		Requests []struct {
			CustomID string          `json:"custom_id"`
			Params   json.RawMessage `json:"params"`
		} `json:"requests"`
	}
	json.Unmarshal(b.body, &req)
	var out bytes.Buffer
	for _, q := range req.Requests {
		result := map[string]any{"type": "expired"}
		if m.Expire == nil || !m.Expire(b.round, q.CustomID) {
			result = map[string]any{"type": "succeeded", "message": json.RawMessage(MessageJSON(m.Answer(q.Params)))}
		}
		j, _ := json.Marshal(map[string]any{"custom_id": q.CustomID, "result": result})
		out.Write(append(j, '\n'))
	}
	m.mu.Lock()
	b.results = out.Bytes()
	m.mu.Unlock()
}

func (m *MessageBatches) object(id string, b *msgBatch, results string) map[string]any {
	now := time.Now().UTC()
	obj := map[string]any{"id": id, "type": "message_batch", "processing_status": "in_progress",
		"request_counts": map[string]int{"processing": 1, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
		"ended_at":       nil, "created_at": now.Format(time.RFC3339Nano), "expires_at": now.Add(24 * time.Hour).Format(time.RFC3339Nano),
		"archived_at": nil, "cancel_initiated_at": nil, "results_url": nil}
	if results != "" {
		obj["processing_status"] = "ended"
		obj["ended_at"] = now.Format(time.RFC3339Nano)
		obj["results_url"] = results
	}
	return obj
}

func anthropicError(msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}
}

// MessageJSON renders a reply as a non-streamed Anthropic Messages body.
func MessageJSON(r Reply) []byte {
	content := []any{}
	if r.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.Text})
	}
	stop := "end_turn"
	for _, c := range r.Calls {
		stop = "tool_use"
		input := json.RawMessage(c.Arguments)
		if !json.Valid(input) {
			input = json.RawMessage(`{}`)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input})
	}
	b, _ := json.Marshal(map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake-model",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 100, "output_tokens": 20}})
	return b
}
