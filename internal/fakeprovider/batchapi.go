package fakeprovider

import (
	"bufio"
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

// BatchAPI is OpenAI's Batch API as its documentation describes it (the
// shapes are in internal/batch/testdata/PROVENANCE.md): POST /files takes
// a JSONL file of requests (multipart, purpose "batch"), POST /batches
// runs it, GET /batches/{id} reports its status, and GET
// /files/{id}/content serves the output and error files. Each request line
// is answered by Answer; a line whose custom_id Expire names is left
// unanswered, as a batch that outran its completion window leaves it, in
// the error file with code batch_expired. Chat Completions requests sent
// directly are refused: a batch must not leak to the synchronous API.
type BatchAPI struct {
	*httptest.Server
	// Answer makes the reply to one request body.
	Answer func(body []byte) Reply
	// Expire reports whether the line custom_id of the batch's round (1,
	// 2, …) expires.
	Expire func(round int, customID string) bool
	// Polls is how many status reads a batch stays in_progress.
	Polls int

	mu      sync.Mutex
	files   map[string][]byte
	batches map[string]*fakeBatch
	// Uploads are the input files, Creates the bodies of POST /batches,
	// in order; Direct counts requests to /chat/completions.
	Uploads [][]byte
	Creates [][]byte
	Direct  int
	// Purposes are the purpose fields of the uploads.
	Purposes []string
}

type fakeBatch struct {
	obj   map[string]any
	polls int
	round int
	input string
}

// StartBatchAPI serves the Batch API on 127.0.0.1.
func StartBatchAPI(answer func(body []byte) Reply) *BatchAPI {
	b := &BatchAPI{Answer: answer, Polls: 1, files: map[string][]byte{}, batches: map[string]*fakeBatch{}}
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	return b
}

func (b *BatchAPI) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		b.mu.Lock()
		b.Direct++
		b.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "fake batch API: a direct request", "type": "invalid_request_error"}})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/files"):
		b.upload(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/batches"):
		b.create(w, r)
	case r.Method == http.MethodGet && strings.Contains(path, "/batches/"):
		b.status(w, path[strings.LastIndex(path, "/")+1:])
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/content"):
		id := strings.TrimSuffix(path, "/content")
		id = id[strings.LastIndex(id, "/")+1:]
		b.mu.Lock()
		data, ok := b.files[id]
		b.mu.Unlock()
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": "no such file", "type": "invalid_request_error"}})
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(data)
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": "fake batch API: no route " + r.Method + " " + path}})
	}
}

func (b *BatchAPI) upload(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "not multipart: " + err.Error()}})
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "no file field"}})
		return
	}
	data, _ := io.ReadAll(f)
	purpose := r.FormValue("purpose")
	b.mu.Lock()
	id := fmt.Sprintf("file-in%d", len(b.files)+1)
	b.files[id] = data
	b.Uploads = append(b.Uploads, data)
	b.Purposes = append(b.Purposes, purpose)
	b.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "file", "bytes": len(data), "created_at": time.Now().Unix(),
		"filename": hdr.Filename, "purpose": purpose, "status": "processed"})
}

func (b *BatchAPI) create(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		InputFileID      string `json:"input_file_id"`
		Endpoint         string `json:"endpoint"`
		CompletionWindow string `json:"completion_window"`
	}
	json.Unmarshal(body, &req)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Creates = append(b.Creates, body)
	input, ok := b.files[req.InputFileID]
	if !ok || req.Endpoint != "/v1/chat/completions" || req.CompletionWindow != "24h" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "fake batch API: bad batch " + string(body)}})
		return
	}
	id := fmt.Sprintf("batch_%d", len(b.batches)+1)
	fb := &fakeBatch{round: len(b.batches) + 1, input: string(input), obj: map[string]any{
		"id": id, "object": "batch", "endpoint": req.Endpoint, "input_file_id": req.InputFileID,
		"completion_window": req.CompletionWindow, "status": "validating", "created_at": time.Now().Unix(),
		"request_counts": map[string]int{"total": 0, "completed": 0, "failed": 0},
	}}
	b.batches[id] = fb
	writeJSON(w, http.StatusOK, fb.obj)
}

// status reads a batch; after Polls reads it has run every line.
func (b *BatchAPI) status(w http.ResponseWriter, id string) {
	b.mu.Lock()
	fb, ok := b.batches[id]
	if !ok {
		b.mu.Unlock()
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": "no such batch"}})
		return
	}
	fb.polls++
	if fb.polls <= b.Polls {
		fb.obj["status"] = "in_progress"
		obj := fb.obj
		b.mu.Unlock()
		writeJSON(w, http.StatusOK, obj)
		return
	}
	if fb.obj["status"] != "in_progress" {
		obj := fb.obj
		b.mu.Unlock()
		writeJSON(w, http.StatusOK, obj)
		return
	}
	b.mu.Unlock()
	var out, errs bytes.Buffer
	total, completed, failed, expired := 0, 0, 0, false
	sc := bufio.NewScanner(strings.NewReader(fb.input))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			CustomID string          `json:"custom_id"`
			Body     json.RawMessage `json:"body"`
		}
		json.Unmarshal(sc.Bytes(), &line)
		total++
		if b.Expire != nil && b.Expire(fb.round, line.CustomID) {
			expired = true
			failed++
			j, _ := json.Marshal(map[string]any{"id": "batch_req_" + line.CustomID, "custom_id": line.CustomID, "response": nil,
				"error": map[string]any{"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
			errs.Write(append(j, '\n'))
			continue
		}
		completed++
		reply := b.Answer(line.Body)
		j, _ := json.Marshal(map[string]any{"id": "batch_req_" + line.CustomID, "custom_id": line.CustomID,
			"response": map[string]any{"status_code": 200, "request_id": "req_" + line.CustomID, "body": json.RawMessage(ChatJSON(reply))}, "error": nil})
		out.Write(append(j, '\n'))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	status := "completed"
	if expired {
		status = "expired"
	}
	fb.obj["status"] = status
	fb.obj["request_counts"] = map[string]int{"total": total, "completed": completed, "failed": failed}
	if out.Len() > 0 {
		b.files["file-out-"+id] = out.Bytes()
		fb.obj["output_file_id"] = "file-out-" + id
	}
	if errs.Len() > 0 {
		b.files["file-err-"+id] = errs.Bytes()
		fb.obj["error_file_id"] = "file-err-" + id
	}
	writeJSON(w, http.StatusOK, fb.obj)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Mu guards Uploads, Creates, Direct and Purposes.
func (b *BatchAPI) Mu() *sync.Mutex { return &b.mu }
