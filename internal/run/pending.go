package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/records"
)

// A run whose request was left in a provider's batch (ask batch
// --no-wait) ends with status pending: its transcript holds the request,
// then a run.finished of status pending that carries the conversation as
// the request sent it, the step, the usage so far. Continue carries such a
// run on under the same id: the reply is the model's answer to that
// request (which is not sent again), the tools run here, and the events
// are appended after the pending run.finished, so that the transcript
// stays one file that `ask log show` and `ask replay` read whole.

// Reply is a provider's answer to a held request: its HTTP status and body.
type Reply struct {
	Status int
	Body   []byte
}

// pendingRun is a pending run's transcript and its last run.finished.
type pendingRun struct {
	id         string
	transcript []byte
	// start and held are its run.started and its held request, for the
	// carried-on run's trace; end its pending run.finished.
	start, held, end records.Event
}

// ReadPending checks that transcript is a run's that stopped pending, and
// returns its id.
func ReadPending(transcript []byte) (string, error) {
	p, err := readPending(transcript)
	if err != nil {
		return "", err
	}
	return p.id, nil
}

// readRun reads a kept run's transcript: its events, the first a
// run.started that names the run.
func readRun(transcript []byte) ([]records.Event, error) {
	events, err := records.Read(bytes.NewReader(transcript))
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, errors.New("the transcript has no events")
	}
	if start := events[0]; start.Type != records.TypeRunStarted || start.ID == "" {
		return nil, errors.New("the transcript does not start with run.started")
	}
	return events, nil
}

func readPending(transcript []byte) (*pendingRun, error) {
	events, err := readRun(transcript)
	if err != nil {
		return nil, err
	}
	start, end := events[0], events[len(events)-1]
	switch {
	case end.Type != records.TypeRunFinished || end.Status != loop.StatusPending:
		return nil, fmt.Errorf("run %s is not pending: its transcript does not end with a run.finished of status pending", start.ID)
	case len(end.History) == 0 || end.Steps < 1:
		return nil, fmt.Errorf("run %s is pending but its run.finished holds no conversation or step", start.ID)
	}
	p := &pendingRun{id: start.ID, transcript: transcript, start: start, end: end}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == records.TypeRequest {
			p.held = events[i]
			break
		}
	}
	return p, nil
}

// Continue carries on the pending run whose transcript is given (see
// above), with reply as the answer to its held request; a nil reply sends
// that request again. Every sink of out gets the transcript so far first,
// then the events that follow. The run must be built as the pending one
// was (the same settings), with New.
func (r *Run) Continue(ctx context.Context, transcript []byte, reply *Reply, out Output) *Result {
	prev, err := readPending(transcript)
	if err != nil {
		return &Result{Result: &loop.Result{Status: loop.StatusError, Err: err}, ExitCode: ExitCode(err), Why: err.Error()}
	}
	if reply != nil {
		if r.caller == nil {
			err := errors.New("a local program's run cannot be carried on from a batch's reply")
			return &Result{Result: &loop.Result{Status: loop.StatusError, Err: err}, ID: prev.id, ExitCode: ExitCode(err), Why: err.Error()}
		}
		var c http.Client
		if r.caller.HTTP != nil {
			c = *r.caller.HTTP
		}
		if c.Transport == nil {
			c.Transport = http.DefaultTransport
		}
		c.Transport = &heldReply{reply: *reply, next: c.Transport}
		r.caller.HTTP = &c
	}
	for _, w := range out.Sinks {
		if w != nil {
			w.Write(transcript)
		}
	}
	return r.execute(ctx, "", out, prev, nil)
}

// heldReply answers the run's first request with the reply its batch gave
// it; the run's later requests go on to next.
type heldReply struct {
	once  sync.Once
	reply Reply
	next  http.RoundTripper
}

func (h *heldReply) RoundTrip(req *http.Request) (*http.Response, error) {
	first := false
	h.once.Do(func() { first = true })
	if !first {
		return h.next.RoundTrip(req)
	}
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	st := h.reply.Status
	return &http.Response{StatusCode: st, Status: strconv.Itoa(st) + " " + http.StatusText(st),
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(h.reply.Body)),
		ContentLength: int64(len(h.reply.Body)), Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}
