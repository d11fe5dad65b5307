package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// geminiBatches is Gemini's Batch Mode. A batch belongs to one model, and
// the requests a round holds are bodies without their URL, so model puts
// each request's model into its body as GenerateContentRequest's own
// "model" field; submit groups the round by it, a batch per model.
type geminiBatches struct{}

// geminiModelOf matches a generateContent request and gives its model,
// the path's last two segments ("models/gemini-2.5-flash",
// "tunedModels/my-model").
func geminiModelOf(req *http.Request) (string, bool) {
	path, ok := strings.CutSuffix(req.URL.EscapedPath(), ":generateContent")
	if req.Method != http.MethodPost || !ok {
		return "", false
	}
	segs := strings.Split(path, "/")
	if len(segs) < 2 || segs[len(segs)-2] == "" || segs[len(segs)-1] == "" {
		return "", false
	}
	kind, err1 := url.PathUnescape(segs[len(segs)-2])
	name, err2 := url.PathUnescape(segs[len(segs)-1])
	return kind + "/" + name, err1 == nil && err2 == nil
}

func (geminiBatches) model(req *http.Request) bool {
	model, ok := geminiModelOf(req)
	if !ok || req.Body == nil {
		return ok
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err == nil {
		body = withModel(body, model)
	}
	// A body that cannot be read is passed on as far as it went; the
	// round reports what the batch makes of it.
	req.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

// withModel is a GenerateContentRequest body with "model" set first.
func withModel(body []byte, model string) []byte {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return body
	}
	if _, ok := fields["model"]; ok {
		return body
	}
	name, _ := json.Marshal(model)
	out := append([]byte(`{"model":`), name...)
	if rest := bytes.TrimSpace(body)[1:]; len(bytes.TrimSpace(rest)) > 1 {
		out = append(out, ',')
		out = append(out, rest...)
	} else {
		out = append(out, '}')
	}
	return out
}

// limit keeps a round of inline requests well under the 20 MB that Batch
// Mode takes inline; a longer conversation makes each request bigger.
func (geminiBatches) limit() int { return 1000 }

// GeminiInlineRequest is one request of an inline batch.
type GeminiInlineRequest struct {
	Request  json.RawMessage   `json:"request"`
	Metadata map[string]string `json:"metadata"`
}

// geminiOperation is the long-running operation a batch is read as: the
// batch (GenerateContentBatch) in metadata, its output in response once
// done.
type geminiOperation struct {
	Name     string `json:"name"`
	Done     bool   `json:"done"`
	Metadata struct {
		Name   string        `json:"name"`
		State  string        `json:"state"`
		Output *geminiOutput `json:"output"`
	} `json:"metadata"`
	Response *geminiOutput `json:"response"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type geminiOutput struct {
	InlinedResponses struct {
		InlinedResponses []geminiInlined `json:"inlinedResponses"`
	} `json:"inlinedResponses"`
}

type geminiInlined struct {
	Response json.RawMessage `json:"response"`
	Error    *geminiStatus   `json:"error"`
	Metadata struct {
		Key string `json:"key"`
	} `json:"metadata"`
}

// geminiStatus is a google.rpc.Status: a gRPC code, not an HTTP status.
type geminiStatus struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// id is the batch's name, "batches/…".
func (o *geminiOperation) id() string {
	if o.Name != "" {
		return o.Name
	}
	return o.Metadata.Name
}

func (o *geminiOperation) terminal() bool {
	switch o.Metadata.State {
	case "BATCH_STATE_SUCCEEDED", "BATCH_STATE_FAILED", "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED":
		return true
	}
	return o.Done
}

// submit sends a batch per model the round's requests name, each request
// keyed by its index in the round, and returns their names, space
// separated: the round's id, which ended and results read them all by.
func (g geminiBatches) submit(ctx context.Context, r *Rounds, bodies [][]byte) (string, error) {
	byModel := map[string][]int{}
	for i, body := range bodies {
		var req struct {
			Model string `json:"model"`
		}
		json.Unmarshal(body, &req)
		byModel[req.Model] = append(byModel[req.Model], i)
	}
	models := make([]string, 0, len(byModel))
	for m := range byModel {
		models = append(models, m)
	}
	sort.Strings(models)
	names := make([]string, len(models))
	for i, m := range models {
		name, err := g.submitModel(ctx, r, m, byModel[m], bodies)
		if err != nil {
			return "", err
		}
		names[i] = name
	}
	return strings.Join(names, " "), nil
}

// submitModel creates the batch of model holding the requests at idx.
func (geminiBatches) submitModel(ctx context.Context, r *Rounds, model string, idx []int, bodies [][]byte) (string, error) {
	if model == "" {
		return "", fmt.Errorf("a request names no model")
	}
	reqs := make([]GeminiInlineRequest, len(idx))
	for j, i := range idx {
		reqs[j] = GeminiInlineRequest{Request: bodies[i], Metadata: map[string]string{"key": strconv.Itoa(i)}}
	}
	create, err := json.Marshal(map[string]any{"batch": map[string]any{
		"display_name": "ask-batch-round",
		"input_config": map[string]any{"requests": map[string]any{"requests": reqs}},
	}})
	if err != nil {
		return "", fmt.Errorf("the requests are not JSON: %w", err)
	}
	path := "/" + escapeModel(model) + ":batchGenerateContent"
	var op geminiOperation
	if err := r.call(ctx, http.MethodPost, path, "application/json", create, &op); err != nil {
		return "", fmt.Errorf("create the batch: %w", err)
	}
	if op.id() == "" {
		return "", fmt.Errorf("the batch created for %s has no name", model)
	}
	return op.id(), nil
}

// read reads the batch name once.
func (geminiBatches) read(ctx context.Context, r *Rounds, name string) (*geminiOperation, error) {
	var op geminiOperation
	if err := r.call(ctx, http.MethodGet, "/"+escapeModel(name), "", nil, &op); err != nil {
		return nil, fmt.Errorf("read the batch %s: %w", name, err)
	}
	if op.Name == "" {
		op.Name = name
	}
	return &op, nil
}

// ended reads each batch of the round and reports whether all have ended.
func (g geminiBatches) ended(ctx context.Context, r *Rounds, id string) (bool, error) {
	for _, name := range strings.Fields(id) {
		op, err := g.read(ctx, r, name)
		if err != nil || !op.terminal() {
			return false, err
		}
	}
	return true, nil
}

// results reads the inline replies of each ended batch of the round.
func (g geminiBatches) results(ctx context.Context, r *Rounds, id string) (map[string]Reply, error) {
	answers := map[string]Reply{}
	for _, name := range strings.Fields(id) {
		op, err := g.read(ctx, r, name)
		if err != nil {
			return nil, err
		}
		if err := inlineReplies(op, answers); err != nil {
			return nil, err
		}
	}
	return answers, nil
}

// escapeModel escapes the two segments of "models/NAME", a name that
// may itself hold a slash.
func escapeModel(model string) string {
	kind, name, _ := strings.Cut(model, "/")
	return url.PathEscape(kind) + "/" + url.PathEscape(name)
}

// inlineReplies reads an ended batch's inline replies into answers. A reply is
// its request's answer; an error that a second try may not repeat
// (deadline, unavailable, internal, resource exhausted) is left out, to
// go again in the next round, as is every request of a batch that failed,
// expired or was cancelled before answering it.
func inlineReplies(op *geminiOperation, answers map[string]Reply) error {
	out := op.Response
	if out == nil {
		out = op.Metadata.Output
	}
	if out == nil {
		if op.Metadata.State == "BATCH_STATE_SUCCEEDED" {
			return fmt.Errorf("batch %s succeeded without inline responses", op.id())
		}
		return nil
	}
	for _, item := range out.InlinedResponses.InlinedResponses {
		key := item.Metadata.Key
		if key == "" {
			continue // not one of ours; the request goes again
		}
		switch {
		case item.Error != nil:
			status, retry := httpStatus(item.Error.Code)
			if retry {
				continue
			}
			body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": status, "message": item.Error.Message}})
			answers[key] = Reply{Status: status, Body: body}
		case len(item.Response) > 0:
			answers[key] = Reply{Status: http.StatusOK, Body: item.Response}
		}
	}
	return nil
}

// httpStatus maps a gRPC code to the HTTP status the same error has from
// generateContent, and reports whether it is worth another try.
func httpStatus(code int) (status int, retry bool) {
	switch code {
	case 4: // DEADLINE_EXCEEDED
		return http.StatusGatewayTimeout, true
	case 8: // RESOURCE_EXHAUSTED
		return http.StatusTooManyRequests, true
	case 13: // INTERNAL
		return http.StatusInternalServerError, true
	case 14: // UNAVAILABLE
		return http.StatusServiceUnavailable, true
	case 5: // NOT_FOUND
		return http.StatusNotFound, false
	case 7: // PERMISSION_DENIED
		return http.StatusForbidden, false
	case 16: // UNAUTHENTICATED
		return http.StatusUnauthorized, false
	}
	return http.StatusBadRequest, false
}
