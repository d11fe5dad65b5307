package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ask-cli/ask/internal/providers"
)

// Rounds sends the model requests of every run under way through the
// provider's batch interface (OpenAI's Batch API, Anthropic's Message
// Batches, Gemini's Batch Mode), at its discount: the runs' HTTP client is Transport, which
// holds each Chat Completions request back; when every run under way is
// waiting for the model, the requests held go as one batch (a round), and
// each run gets its reply once the batch is done, runs its tools locally,
// and sends its next request into the next round. A request the batch
// did not answer (expired, failed) goes again in the next round, once.
type Rounds struct {
	// BaseURL is the provider's ("https://api.openai.com/v1"), Key its key.
	BaseURL, Key string
	// HTTP sends the Batch API's own requests and any request that is not
	// a chat completion.
	HTTP *http.Client
	// Poll is the first wait between status reads, doubled up to MaxPoll.
	Poll, MaxPoll time.Duration
	// Settle is how long the runs must all be waiting before a round goes:
	// a run that just ended may be followed by the next task's first
	// request.
	Settle time.Duration
	// OnRound is told of each batch as it is created; nil tells nobody.
	OnRound func(id string, requests int)
	// OnPending, when set, is --no-wait: a round once created is not
	// waited for. OnPending is told of it (to keep its state), then every
	// run it holds is stopped (RunTag.Stop), and no round follows: Begin
	// says no to any run after. An error from OnPending fails the runs.
	OnPending func(Pending) error

	eng engine

	mu      sync.Mutex
	active  int
	pending []*held
	changed chan struct{}
	round   int
	stopped bool // a round was left pending
}

// Reply is the provider's answer to one request of a batch.
type Reply struct {
	Status int
	Body   []byte
	// Err, when set, is what the run's request fails with instead: the
	// batch interface's own request failed, and says where.
	Err error
}

// Pending is a round left pending: the provider's batch and the requests
// it holds, each by its custom_id.
type Pending struct {
	BatchID  string
	Requests []PendingRequest
}

// PendingRequest is one request of a pending round.
type PendingRequest struct {
	CustomID string
	// Tries counts the rounds the request went in before this one.
	Tries int
	Run   *RunTag
}

// RunTag names the run a request comes from; the batch's runner puts it
// in the context of the run's requests (WithRun).
type RunTag struct {
	// ID is the runner's name for the run (its task's id).
	ID string
	// Stop ends the run as pending (--no-wait).
	Stop func()
	// Tries is how many rounds the run's next request went in before,
	// when it is sent again on a resume; it is used once.
	Tries int
}

type runTagKey struct{}

// WithRun tags the requests made under ctx as the run t's.
func WithRun(ctx context.Context, t *RunTag) context.Context {
	return context.WithValue(ctx, runTagKey{}, t)
}

// held is one request waiting for its round.
type held struct {
	body  []byte
	tries int
	tag   *RunTag // nil for an untagged run
	reply chan Reply
}

// engine is one provider's batch interface. Each call stands alone, given
// the batch's id, so that a batch submitted by one process can be read by
// another (ask batch --resume).
type engine interface {
	// model reports whether req is a model request a round takes.
	model(req *http.Request) bool
	// submit sends the round's request bodies as one batch, custom_id
	// "i" for bodies[i], and returns the batch's id.
	submit(ctx context.Context, r *Rounds, bodies [][]byte) (string, error)
	// ended reads the batch once and reports whether it has ended.
	ended(ctx context.Context, r *Rounds, id string) (bool, error)
	// results reads an ended batch's replies by custom_id; a request the
	// batch did not answer (expired, failed without a response) is left
	// out.
	results(ctx context.Context, r *Rounds, id string) (map[string]Reply, error)
	// authorize sets the credentials of a batch request.
	authorize(h http.Header, key string)
	// limit is the most requests a batch holds.
	limit() int
}

// NewRounds is a coordinator for OpenAI's Batch API at baseURL.
func NewRounds(baseURL, key string, client *http.Client) *Rounds {
	return newRounds(baseURL, key, client, openAIBatches{})
}

func newRounds(baseURL, key string, client *http.Client, eng engine) *Rounds {
	return &Rounds{BaseURL: strings.TrimRight(baseURL, "/"), Key: key, HTTP: client, eng: eng,
		Poll: 500 * time.Millisecond, MaxPoll: time.Minute, Settle: 100 * time.Millisecond, changed: make(chan struct{}, 1)}
}

// Limit is the most requests one batch holds.
func (r *Rounds) Limit() int { return r.eng.limit() }

// Begin and End count the runs under way: a round waits for all of them.
// Begin is false, and counts nothing, once a round was left pending: the
// run must not start.
func (r *Rounds) Begin() bool {
	r.mu.Lock()
	ok := !r.stopped
	if ok {
		r.active++
	}
	r.mu.Unlock()
	r.kick()
	return ok
}

func (r *Rounds) End() { r.mu.Lock(); r.active--; r.mu.Unlock(); r.kick() }

func (r *Rounds) kick() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// Transport is the runs' HTTP transport.
func (r *Rounds) Transport() http.RoundTripper { return roundsTransport{r} }

type roundsTransport struct{ r *Rounds }

func (t roundsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.r.eng.model(req) {
		return t.r.client().Transport.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	h := &held{body: body, reply: make(chan Reply, 1)}
	if tag, ok := req.Context().Value(runTagKey{}).(*RunTag); ok {
		h.tag = tag
		h.tries, tag.Tries = tag.Tries, 0
	}
	t.r.mu.Lock()
	if t.r.stopped {
		// The round was left pending before this request came: it would
		// wait for a round that never goes.
		t.r.mu.Unlock()
		rep := ErrorReply(http.StatusBadGateway, "the batch was left pending (--no-wait) before this request was made")
		h.reply <- rep
	} else {
		t.r.pending = append(t.r.pending, h)
		t.r.mu.Unlock()
	}
	t.r.kick()
	select {
	case rep := <-h.reply:
		if rep.Err != nil {
			return nil, rep.Err
		}
		return &http.Response{StatusCode: rep.Status, Status: strconv.Itoa(rep.Status) + " " + http.StatusText(rep.Status),
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(rep.Body)),
			ContentLength: int64(len(rep.Body)), Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
	case <-req.Context().Done():
		return nil, context.Cause(req.Context())
	}
}

func (r *Rounds) client() *http.Client {
	c := r.HTTP
	if c == nil {
		c = http.DefaultClient
	}
	if c.Transport == nil {
		c = &http.Client{Transport: http.DefaultTransport, Timeout: c.Timeout}
	}
	return c
}

// Run sends rounds until ctx ends. A round that fails as a whole (the
// upload, the batch's creation) answers its requests with the error.
func (r *Rounds) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.changed:
		}
		if !r.ready() {
			continue
		}
		// Every run waits: let the set settle, then take it.
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.Settle):
		}
		r.mu.Lock()
		if len(r.pending) == 0 || len(r.pending) < r.active {
			// A run began while the set settled: wait for it too.
			r.mu.Unlock()
			r.kick()
			continue
		}
		round := r.pending
		r.pending = nil
		r.round++
		r.stopped = r.OnPending != nil
		r.mu.Unlock()
		if r.OnPending != nil {
			r.leave(ctx, round)
			return
		}
		r.send(ctx, round)
		r.kick()
	}
}

// leave submits a round and leaves it pending (--no-wait).
func (r *Rounds) leave(ctx context.Context, round []*held) {
	id, err := r.submit(ctx, round)
	if err == nil {
		p := Pending{BatchID: id}
		for i, h := range round {
			p.Requests = append(p.Requests, PendingRequest{CustomID: strconv.Itoa(i), Tries: h.tries, Run: h.tag})
		}
		err = r.OnPending(p)
	}
	for _, h := range round {
		switch {
		case err != nil:
			h.reply <- interfaceFailed(err)
		case h.tag != nil && h.tag.Stop != nil:
			h.tag.Stop()
		default:
			h.reply <- ErrorReply(http.StatusBadGateway, "the batch was left pending, but this request names no run to stop")
		}
	}
}

// submit sends a round's requests as one batch and tells OnRound.
func (r *Rounds) submit(ctx context.Context, round []*held) (string, error) {
	bodies := make([][]byte, len(round))
	for i, h := range round {
		bodies[i] = h.body
	}
	id, err := r.eng.submit(ctx, r, bodies)
	if err != nil {
		return "", err
	}
	if r.OnRound != nil {
		r.OnRound(id, len(round))
	}
	return id, nil
}

// Collect reads the batch id: with wait, until it has ended; without, once.
// When it has ended, the replies by custom_id.
func (r *Rounds) Collect(ctx context.Context, id string, wait bool) (replies map[string]Reply, ended bool, err error) {
	ended, err = r.eng.ended(ctx, r, id)
	if err == nil && !ended && wait {
		err = r.poll(ctx, func() bool { return ended }, func() error {
			ended, err = r.eng.ended(ctx, r, id)
			return err
		})
	}
	if err != nil || !ended {
		return nil, ended, err
	}
	replies, err = r.eng.results(ctx, r, id)
	return replies, true, err
}

// ready reports whether every run under way is waiting for the model.
func (r *Rounds) ready() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending) > 0 && len(r.pending) >= r.active
}

// send runs one round and answers its requests.
func (r *Rounds) send(ctx context.Context, round []*held) {
	id, err := r.submit(ctx, round)
	var answers map[string]Reply
	if err == nil {
		answers, _, err = r.Collect(ctx, id, true)
	}
	for i, h := range round {
		a, ok := answers[strconv.Itoa(i)]
		switch {
		case err != nil:
			h.reply <- interfaceFailed(err)
		case ok:
			h.reply <- a
		case h.tries == 0:
			// Expired or failed: once more, in the next round.
			h.tries++
			r.mu.Lock()
			r.pending = append(r.pending, h)
			r.mu.Unlock()
		default:
			h.reply <- Unanswered()
		}
	}
}

// Unanswered is the reply to a request that a batch left unanswered in
// two rounds: that task's error.
func Unanswered() Reply {
	return ErrorReply(http.StatusBadRequest, "the batch interface left this request unanswered twice (expired or failed)")
}

// interfaceFailed is the reply to the requests of a round the batch
// interface failed as a whole. An HTTP error names the request that got it
// (POST …/files: HTTP 404), not the model request the run made, which
// never went.
func interfaceFailed(err error) Reply {
	var he *httpError
	if errors.As(err, &he) {
		return Reply{Err: &providers.APIError{StatusCode: he.status, URL: he.url, Type: "batch_error", Message: "the batch interface: " + err.Error()}}
	}
	return ErrorReply(http.StatusBadGateway, "the batch interface: "+err.Error())
}

// httpError is a request of the batch interface that got an HTTP error.
type httpError struct {
	method, path, url string
	status            int
	msg               string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.method, e.path, e.status, e.msg)
}

// ErrorReply is an API error as a reply, which the run reads as the
// provider's error.
func ErrorReply(status int, msg string) Reply {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "batch_error"}})
	return Reply{Status: status, Body: b}
}

// BatchLine is one line of a batch's input file.
type BatchLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// openAIBatches is OpenAI's Batch API.
type openAIBatches struct{}

func (openAIBatches) model(req *http.Request) bool {
	return req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/chat/completions")
}

func (openAIBatches) authorize(h http.Header, key string) { h.Set("Authorization", "Bearer "+key) }

func (openAIBatches) limit() int { return 50000 }

// submit uploads the round's requests and creates the batch.
func (openAIBatches) submit(ctx context.Context, r *Rounds, bodies [][]byte) (string, error) {
	var input bytes.Buffer
	for i, body := range bodies {
		line, err := json.Marshal(BatchLine{CustomID: strconv.Itoa(i), Method: http.MethodPost, URL: "/v1/chat/completions", Body: body})
		if err != nil {
			return "", fmt.Errorf("request %d is not JSON: %w", i, err)
		}
		input.Write(append(line, '\n'))
	}
	var file struct {
		ID string `json:"id"`
	}
	if err := r.upload(ctx, input.Bytes(), &file); err != nil {
		return "", fmt.Errorf("upload the requests: %w", err)
	}
	var b batchObject
	create, _ := json.Marshal(map[string]string{"input_file_id": file.ID, "endpoint": "/v1/chat/completions", "completion_window": "24h"})
	if err := r.call(ctx, http.MethodPost, "/batches", "application/json", create, &b); err != nil {
		return "", fmt.Errorf("create the batch: %w", err)
	}
	if b.ID == "" {
		return "", errors.New("create the batch: the answer names no batch id")
	}
	return b.ID, nil
}

func (openAIBatches) read(ctx context.Context, r *Rounds, id string) (batchObject, error) {
	var b batchObject
	if err := r.call(ctx, http.MethodGet, "/batches/"+id, "", nil, &b); err != nil {
		return b, fmt.Errorf("read the batch %s: %w", id, err)
	}
	return b, nil
}

func (o openAIBatches) ended(ctx context.Context, r *Rounds, id string) (bool, error) {
	b, err := o.read(ctx, r, id)
	return b.terminal(), err
}

// results reads the batch's output and error files: a line of the error
// file with a response is that request's reply; one without is left out
// (run again).
func (o openAIBatches) results(ctx context.Context, r *Rounds, id string) (map[string]Reply, error) {
	b, err := o.read(ctx, r, id)
	if err != nil {
		return nil, err
	}
	answers := map[string]Reply{}
	for _, file := range []string{b.OutputFileID, b.ErrorFileID} {
		if file == "" {
			continue
		}
		if err := r.readResults(ctx, file, answers); err != nil {
			return nil, fmt.Errorf("the results of batch %s: %w", b.ID, err)
		}
	}
	return answers, nil
}

// poll reads the batch with read until done says so, waiting Poll at
// first and twice as long each time, up to MaxPoll.
func (r *Rounds) poll(ctx context.Context, done func() bool, read func() error) error {
	wait := r.Poll
	for !done() {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(wait):
		}
		wait = min(wait*2, r.MaxPoll)
		if err := read(); err != nil {
			return err
		}
	}
	return nil
}

type batchObject struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	OutputFileID string `json:"output_file_id"`
	ErrorFileID  string `json:"error_file_id"`
}

func (b batchObject) terminal() bool {
	switch b.Status {
	case "completed", "failed", "expired", "cancelled":
		return true
	}
	return false
}

// readResults reads an output or error file into answers.
func (r *Rounds) readResults(ctx context.Context, fileID string, answers map[string]Reply) error {
	var data []byte
	if err := r.call(ctx, http.MethodGet, "/files/"+fileID+"/content", "", nil, &data); err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			CustomID string `json:"custom_id"`
			Response *struct {
				StatusCode int             `json:"status_code"`
				Body       json.RawMessage `json:"body"`
			} `json:"response"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("a line of file %s is not JSON: %w", fileID, err)
		}
		if line.Response != nil && line.Response.StatusCode != 0 {
			answers[line.CustomID] = Reply{Status: line.Response.StatusCode, Body: line.Response.Body}
		}
	}
	return sc.Err()
}

// upload sends the round's file to /files with purpose "batch".
func (r *Rounds) upload(ctx context.Context, data []byte, out any) error {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("purpose", "batch")
	fw, err := mw.CreateFormFile("file", "ask-batch-round.jsonl")
	if err != nil {
		return err
	}
	fw.Write(data)
	mw.Close()
	return r.call(ctx, http.MethodPost, "/files", mw.FormDataContentType(), body.Bytes(), out)
}

// call sends one request of the batch interface to path under BaseURL,
// or to an absolute URL; out is a *[]byte for a raw body, else decoded
// JSON.
func (r *Rounds) call(ctx context.Context, method, path, contentType string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	url := path
	if !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://") {
		url = r.BaseURL + path
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	r.eng.authorize(req.Header, r.Key)
	req.Header.Set("User-Agent", "ask")
	resp, err := r.client().Do(req)
	if err != nil {
		return errors.New(strings.ReplaceAll(err.Error(), r.BaseURL, "the provider"))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(data))
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
			msg = e.Error.Message
		}
		return &httpError{method: method, path: path, url: providers.RedactURL(url), status: resp.StatusCode, msg: msg}
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data
		return nil
	}
	return json.Unmarshal(data, out)
}
