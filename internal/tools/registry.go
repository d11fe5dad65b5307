package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ask-cli/ask/internal/schema"
)

// Risk says what a tool can do to the machine; the loop's policy (modes,
// --safe) is decided from it.
type Risk string

const (
	Read  Risk = "read"  // only looks
	Write Risk = "write" // changes files in the working directory
	Exec  Risk = "exec"  // runs arbitrary commands
)

// Info describes a tool to the model and to the policy.
type Info struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is a JSON Schema object; empty means the tool takes none.
	Parameters       json.RawMessage `json:"parameters,omitempty"`
	Risk             Risk            `json:"risk"`
	RequiresApproval bool            `json:"requires_approval"`
	// Sandboxed says that every process the tool starts is confined by a
	// sandbox that works here, so that --safe may let it run.
	Sandboxed bool `json:"sandboxed,omitempty"`
}

// Tool is anything the model may call.
type Tool interface {
	Info() Info
	// Run executes one call with arguments already validated against
	// Info().Parameters. A returned error becomes an error result whose
	// content is err.Error(), so its text is written for the model.
	Run(ctx context.Context, args json.RawMessage) (string, error)
}

// validName is what every provider accepts as a function name (OpenAI's rule
// is the strictest): ^[A-Za-z0-9_-]{1,64}$. It is a byte loop rather than
// a regexp because a package-level regexp is compiled at start-up by every
// run, --version included (860 allocations), for a check this simple.
var validName nameRule

// nameRule keeps the MatchString shape of the regexp it replaced, which
// usertool.go calls too.
type nameRule struct{}

// maxNameLen is the longest function name providers accept.
const maxNameLen = 64

func (nameRule) MatchString(s string) bool {
	if len(s) == 0 || len(s) > maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Registry holds the tools offered in a run, in declaration order. It is
// safe for concurrent use: the loop runs independent calls in parallel.
type Registry struct {
	mu      sync.RWMutex
	entries []*entry
	byName  map[string]*entry
}

type entry struct {
	tool Tool
	info Info

	once      sync.Once // compiles the schema on the first call
	schema    *schema.Schema
	schemaErr error
}

// NewRegistry returns a registry holding tools in the given order.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]*entry)}
	for _, t := range tools {
		if err := r.Add(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add appends a tool. Names must be unique and made of letters, digits, "_"
// and "-" (at most 64); parameters, when given, must be a JSON object.
func (r *Registry) Add(t Tool) error {
	if t == nil {
		return errors.New("add tool: nil tool")
	}
	info := t.Info()
	if !validName.MatchString(info.Name) {
		return fmt.Errorf("add tool %q: name must be 1-64 letters, digits, '_' or '-'", info.Name)
	}
	if p := bytes.TrimSpace(info.Parameters); len(p) > 0 {
		if !json.Valid(p) || p[0] != '{' {
			return fmt.Errorf("add tool %q: parameters must be a JSON Schema object", info.Name)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil {
		r.byName = make(map[string]*entry)
	}
	if _, dup := r.byName[info.Name]; dup {
		return fmt.Errorf("add tool %q: a tool with this name is already registered", info.Name)
	}
	e := &entry{tool: t, info: info}
	r.entries = append(r.entries, e)
	r.byName[info.Name] = e
	return nil
}

// Get returns the tool with that name.
func (r *Registry) Get(name string) (Tool, bool) {
	if e := r.lookup(name); e != nil {
		return e.tool, true
	}
	return nil, false
}

// List returns the tools in declaration order.
func (r *Registry) List() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, len(r.entries))
	for i, e := range r.entries {
		out[i] = e.tool
	}
	return out
}

func (r *Registry) lookup(name string) *entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byName[name]
}

func (r *Registry) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, len(r.entries))
	for i, e := range r.entries {
		out[i] = e.info.Name
	}
	return out
}

// CheckArguments refuses arguments that the policy and the tool could read
// two ways (see the function CheckArguments), before anyone reads them; a
// call to an unknown tool is left to Call to answer.
func (r *Registry) CheckArguments(name, arguments string) error {
	e := r.lookup(name)
	if e == nil {
		return nil
	}
	if err := CheckArguments(e.info.Parameters, arguments); err != nil {
		return fmt.Errorf("invalid arguments for %s: %w", name, err)
	}
	return nil
}

// Call validates one call and runs it. Every failure is returned as content
// with isError set, written so that the model can correct itself; Call never
// panics, whatever the name and arguments.
func (r *Registry) Call(ctx context.Context, name, arguments string) (content string, isError bool) {
	e := r.lookup(name)
	if e == nil {
		names := r.names()
		if len(names) == 0 {
			return fmt.Sprintf("unknown tool %q: no tools are available", name), true
		}
		return fmt.Sprintf("unknown tool %q; available tools: %s", name, strings.Join(names, ", ")), true
	}
	args := strings.TrimSpace(arguments)
	if args == "" {
		args = "{}"
	}
	if err := CheckArguments(e.info.Parameters, args); err != nil {
		return fmt.Sprintf("invalid arguments for %s: %v", name, err), true
	}
	var syntax any
	if err := json.Unmarshal([]byte(args), &syntax); err != nil {
		return fmt.Sprintf("invalid arguments for %s: not valid JSON (%v); send one JSON object, e.g. {\"name\": value}", name, err), true
	}
	if _, ok := syntax.(map[string]any); !ok {
		return fmt.Sprintf("invalid arguments for %s: must be a JSON object, got %s", name, jsonKind(syntax)), true
	}
	compiled, err := e.compiled()
	if err != nil {
		return fmt.Sprintf("tool %s cannot be called: its parameters schema is invalid: %v", name, err), true
	}
	if compiled != nil {
		if err := compiled.Validate(syntax); err != nil {
			return fmt.Sprintf("invalid arguments for %s:\n%s\nparameters schema: %s", name, describeViolations(err), compactJSON(e.info.Parameters)), true
		}
	}
	out, err := runSafely(ctx, e.tool, json.RawMessage(args))
	if err != nil {
		return err.Error(), true
	}
	return out, false
}

// runSafely runs a tool, turning a panic into an error result: one broken
// tool must not take the whole run down.
func runSafely(ctx context.Context, t Tool, args json.RawMessage) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("tool %s failed unexpectedly: %v", t.Info().Name, p)
		}
	}()
	return t.Run(ctx, args)
}

// compiled returns the tool's schema, compiling it once. Nil means no schema.
func (e *entry) compiled() (*schema.Schema, error) {
	e.once.Do(func() {
		params := bytes.TrimSpace(e.info.Parameters)
		if len(params) == 0 || string(params) == "null" {
			return
		}
		// A "$ref" in a tool's schema never reads local files or fetches
		// URLs: schema.Compile refuses every reference outside the schema.
		e.schema, e.schemaErr = schema.Compile(params)
	})
	return e.schema, e.schemaErr
}

// describeViolations lists what is wrong with the arguments, one problem a
// line, as "- at /properties/field: message" (the schema location of the
// keyword that failed; "/" is the whole schema). The validator stops at
// the first problem, so there is one line.
func describeViolations(err error) string {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		lines = append(lines, "- "+l)
	}
	return strings.Join(lines, "\n")
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
