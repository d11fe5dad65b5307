// Package acptest checks the messages ask acp writes against the official
// ACP schema (internal/acp/testdata/schema.json): each one by its own type,
// a response by the method of the request it answers. The schema's
// envelope alone would take almost anything (its extension types are
// open), so the tests never rely on it alone.
package acptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The types of what ask sends: its requests and notifications by method,
// its responses by the method they answer.
var (
	outgoing = map[string]string{
		"session/request_permission": "RequestPermissionRequest",
		"fs/read_text_file":          "ReadTextFileRequest",
		"fs/write_text_file":         "WriteTextFileRequest",
		"session/update":             "SessionNotification",
	}
	responses = map[string]string{
		"initialize":       "InitializeResponse",
		"authenticate":     "AuthenticateResponse",
		"session/new":      "NewSessionResponse",
		"session/load":     "LoadSessionResponse",
		"session/set_mode": "SetSessionModeResponse",
		"session/prompt":   "PromptResponse",
	}
)

// Validator checks ask's messages.
type Validator struct {
	envelope *jsonschema.Schema
	defs     map[string]*jsonschema.Schema

	mu sync.Mutex
	// asked are the methods of the client's requests, by id.
	asked map[string]string
}

// New compiles the schema.
func New() (*Validator, error) {
	_, file, _, _ := runtime.Caller(0)
	f, err := os.Open(filepath.Join(filepath.Dir(file), "..", "testdata", "schema.json"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("acp.json", doc); err != nil {
		return nil, err
	}
	v := &Validator{defs: map[string]*jsonschema.Schema{}, asked: map[string]string{}}
	if v.envelope, err = c.Compile("acp.json#/anyOf/0"); err != nil {
		return nil, err
	}
	for _, m := range []map[string]string{outgoing, responses, {"": "Error"}} {
		for _, def := range m {
			if v.defs[def], err = c.Compile("acp.json#/$defs/" + def); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// ClientSent notes a line the client sent: a request's id and method, to
// check the response to it.
func (v *Validator) ClientSent(line []byte) {
	var m message
	if json.Unmarshal(line, &m) != nil || m.Method == "" || m.ID == nil {
		return
	}
	v.mu.Lock()
	v.asked[string(bytes.TrimSpace(m.ID))] = m.Method
	v.mu.Unlock()
}

// Check validates one line ask wrote.
func (v *Validator) Check(line []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := v.envelope.Validate(doc); err != nil {
		return err
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return err
	}
	def, part := "", m.Params
	switch {
	case m.Method != "":
		def = outgoing[m.Method]
		if def == "" {
			return fmt.Errorf("ask sent %s, which is no method the client serves", m.Method)
		}
	case m.Error != nil:
		def, part = "Error", m.Error
	default:
		v.mu.Lock()
		method := v.asked[string(bytes.TrimSpace(m.ID))]
		v.mu.Unlock()
		if def = responses[method]; def == "" {
			return fmt.Errorf("a result to id %s, which answers no request of the client's (%q)", m.ID, method)
		}
		part = m.Result
	}
	pdoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(part))
	if err != nil {
		return fmt.Errorf("%s: %w", def, err)
	}
	if err := v.defs[def].Validate(pdoc); err != nil {
		return fmt.Errorf("as %s: %w", def, err)
	}
	return nil
}
