package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// anthropicBatches is Anthropic's Message Batches API: the requests go in
// the body of the batch's creation, and the results are JSON lines at the
// batch's results_url once it has ended.
type anthropicBatches struct{}

func (anthropicBatches) model(req *http.Request) bool {
	return req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/messages")
}

func (anthropicBatches) limit() int { return 100000 }

// AnthropicRequest is one request of a Message Batch.
type AnthropicRequest struct {
	CustomID string          `json:"custom_id"`
	Params   json.RawMessage `json:"params"`
}

type messageBatch struct {
	ID               string `json:"id"`
	ProcessingStatus string `json:"processing_status"`
	ResultsURL       string `json:"results_url"`
}

// submit creates the batch, the requests in its body.
func (anthropicBatches) submit(ctx context.Context, r *Rounds, bodies [][]byte) (string, error) {
	reqs := make([]AnthropicRequest, len(bodies))
	for i, body := range bodies {
		reqs[i] = AnthropicRequest{CustomID: strconv.Itoa(i), Params: body}
	}
	create, err := json.Marshal(map[string]any{"requests": reqs})
	if err != nil {
		return "", fmt.Errorf("the requests are not JSON: %w", err)
	}
	var b messageBatch
	if err := r.call(ctx, http.MethodPost, "/messages/batches", "application/json", create, &b); err != nil {
		return "", fmt.Errorf("create the batch: %w", err)
	}
	if b.ID == "" {
		return "", errors.New("create the batch: the answer names no batch id")
	}
	return b.ID, nil
}

func (anthropicBatches) read(ctx context.Context, r *Rounds, id string) (messageBatch, error) {
	var b messageBatch
	if err := r.call(ctx, http.MethodGet, "/messages/batches/"+id, "", nil, &b); err != nil {
		return b, fmt.Errorf("read the batch %s: %w", id, err)
	}
	return b, nil
}

func (a anthropicBatches) ended(ctx context.Context, r *Rounds, id string) (bool, error) {
	b, err := a.read(ctx, r, id)
	return b.ProcessingStatus == "ended", err
}

// results reads the ended batch's results: a succeeded result's message
// is its request's reply, an errored one's error an API error; an expired
// or canceled one is left out (run again).
func (a anthropicBatches) results(ctx context.Context, r *Rounds, id string) (map[string]Reply, error) {
	b, err := a.read(ctx, r, id)
	if err != nil {
		return nil, err
	}
	if b.ResultsURL == "" {
		return nil, fmt.Errorf("batch %s ended without a results_url", b.ID)
	}
	var data []byte
	if err := r.call(ctx, http.MethodGet, b.ResultsURL, "", nil, &data); err != nil {
		return nil, fmt.Errorf("the results of batch %s: %w", b.ID, err)
	}
	answers := map[string]Reply{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			CustomID string `json:"custom_id"`
			Result   struct {
				Type    string          `json:"type"`
				Message json.RawMessage `json:"message"`
				Error   json.RawMessage `json:"error"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("a result of batch %s is not JSON: %w", b.ID, err)
		}
		switch line.Result.Type {
		case "succeeded":
			answers[line.CustomID] = Reply{Status: http.StatusOK, Body: line.Result.Message}
		case "errored":
			// The error is the API's error object, as a request would
			// have had it.
			answers[line.CustomID] = Reply{Status: http.StatusBadRequest, Body: line.Result.Error}
		}
	}
	return answers, sc.Err()
}
