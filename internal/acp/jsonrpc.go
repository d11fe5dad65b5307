package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// JSON-RPC 2.0 error codes the protocol uses.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// maxLine bounds one message: a prompt with embedded files and images fits
// easily; a line past it is answered with an error and skipped.
const maxLine = 64 << 20

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// message is any JSON-RPC message: a request (ID and Method), a
// notification (Method alone) or a response (ID and Result or Error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

func (m *message) isRequest() bool      { return m.Method != "" && m.ID != nil }
func (m *message) isNotification() bool { return m.Method != "" && m.ID == nil }

// nullID answers a message whose id could not be read.
var nullID = json.RawMessage("null")

// parseMessage reads one line as a JSON-RPC 2.0 message. A line that is
// not JSON is a parse error; JSON that is not a message is an invalid
// request, answered to its id when it has a valid one (else null).
func parseMessage(line []byte) (*message, json.RawMessage, *Error) {
	if !json.Valid(line) {
		return nil, nullID, errorf(CodeParseError, "parse error: the line is not JSON")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, nullID, errorf(CodeInvalidRequest, "invalid request: a message is one JSON object (batches are not used by ACP)")
	}
	id := nullID
	if v, ok := raw["id"]; ok {
		if !validID(v) {
			return nil, nullID, errorf(CodeInvalidRequest, "invalid request: id must be a string, an integer or null")
		}
		id = v
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, id, errorf(CodeInvalidRequest, "invalid request: %v", err)
	}
	if _, ok := raw["id"]; !ok {
		m.ID = nil
	} else {
		m.ID = id
	}
	_, hasMethod := raw["method"]
	_, hasResult := raw["result"]
	_, hasError := raw["error"]
	switch {
	case m.JSONRPC != "2.0":
		return nil, id, errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	case hasMethod && m.Method == "":
		return nil, id, errorf(CodeInvalidRequest, "invalid request: method must be a non-empty string")
	case hasMethod && (hasResult || hasError):
		return nil, id, errorf(CodeInvalidRequest, "invalid request: a message has a method or a result, not both")
	case !hasMethod && (m.ID == nil || hasResult == hasError):
		return nil, id, errorf(CodeInvalidRequest, "invalid request: a message needs a method, or an id with one result or error")
	case len(m.Params) > 0 && m.Params[0] != '{' && m.Params[0] != '[' && !bytes.Equal(m.Params, []byte("null")):
		return nil, id, errorf(CodeInvalidRequest, "invalid request: params must be an object")
	}
	return &m, id, nil
}

// validID reports whether raw is an id JSON-RPC allows: a string, an
// integer or null.
func validID(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case nil, string:
		return true
	case float64: // an integer, written as one
		_, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
		return err == nil
	}
	return false
}

// readLine reads one newline-delimited message, without its line end. A
// line longer than limit is read to its end and reported too long.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && (len(line) == 0 && !tooLong || !errors.Is(err, io.EOF)):
			return nil, false, err
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, nil
	}
}

// conn writes messages one line each and matches the responses to the
// requests it sent.
type conn struct {
	mu  sync.Mutex // one message at a time
	out io.Writer
	// sent, when set, is told every line written (tests validate them).
	sent func([]byte)

	pmu     sync.Mutex
	next    int64
	pending map[string]chan *message
	closed  bool
}

func newConn(out io.Writer) *conn {
	return &conn{out: out, pending: map[string]chan *message{}}
}

func (c *conn) write(m *message) error {
	m.JSONRPC = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding a %s message: %w", m.Method, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sent != nil {
		c.sent(b)
	}
	_, err = c.out.Write(append(b, '\n'))
	return err
}

func (c *conn) reply(id json.RawMessage, result any) error {
	b, err := json.Marshal(result)
	if err != nil {
		return c.replyError(id, errorf(CodeInternalError, "internal error: %v", err))
	}
	return c.write(&message{ID: id, Result: b})
}

func (c *conn) replyError(id json.RawMessage, e *Error) error {
	if id == nil {
		id = nullID
	}
	return c.write(&message{ID: id, Error: e})
}

func (c *conn) notify(method string, params any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return c.write(&message{Method: method, Params: b})
}

// call sends a request and waits for its response, decoded into result.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	ch := make(chan *message, 1)
	c.pmu.Lock()
	if c.closed {
		c.pmu.Unlock()
		return errors.New("the client has closed the connection")
	}
	c.next++
	key := strconv.FormatInt(c.next, 10)
	c.pending[key] = ch
	c.pmu.Unlock()
	defer func() {
		c.pmu.Lock()
		delete(c.pending, key)
		c.pmu.Unlock()
	}()
	if err := c.write(&message{ID: json.RawMessage(key), Method: method, Params: b}); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case m, ok := <-ch:
		switch {
		case !ok:
			return errors.New("the client closed the connection before answering " + method)
		case m.Error != nil:
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("%s: the client's answer: %w", method, err)
		}
		return nil
	}
}

// deliver hands a response to the request waiting for it; a response to
// no request of ours is dropped.
func (c *conn) deliver(m *message) bool {
	key := string(bytes.TrimSpace(m.ID))
	c.pmu.Lock()
	defer c.pmu.Unlock()
	ch, ok := c.pending[key]
	if ok {
		ch <- m // buffered: the caller reads it once
		delete(c.pending, key)
	}
	return ok
}

// close fails every request still waiting: the client is gone.
func (c *conn) close() {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	c.closed = true
	for k, ch := range c.pending {
		close(ch)
		delete(c.pending, k)
	}
}
