// Package acp is ask as an agent of the Agent Client Protocol (v1,
// JSON-RPC 2.0 over stdio, one message a line): an editor starts `ask acp`,
// opens sessions and sends prompts; each session is one kept run, built
// through internal/run under the command line's policy, whose approvals
// are the editor's session/request_permission.
package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// ProtocolVersion is the ACP version ask speaks.
const ProtocolVersion = 1

// Config is what every session of one `ask acp` is built from.
type Config struct {
	// Settings are the command line's, resolved: every session's policy.
	Settings run.Settings
	// Env is the world the runs are built in; its Prompter is the
	// session's client.
	Env run.Env
	// History keeps the sessions' runs; nil keeps none (session/load then
	// finds nothing).
	History *history.Store
	// Log receives diagnostics (stderr): stdout is the protocol's.
	Log io.Writer
	// Version is ask's, told in initialize.
	Version string
}

// Serve speaks ACP on in and out until in ends, then stops every turn
// and returns nil. Malformed input is answered with a JSON-RPC error and
// the agent goes on.
func Serve(ctx context.Context, in io.Reader, out io.Writer, cfg Config) error {
	s := newServer(ctx, out, cfg)
	return s.serve(in)
}

type server struct {
	ctx  context.Context
	cfg  Config
	conn *conn

	mu       sync.Mutex
	client   clientCapabilities
	sessions map[string]*session
	wg       sync.WaitGroup
}

func newServer(ctx context.Context, out io.Writer, cfg Config) *server {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	return &server{ctx: ctx, cfg: cfg, conn: newConn(out), sessions: map[string]*session{}}
}

func (s *server) serve(in io.Reader) error {
	defer func() {
		// The turns under way finish (a question to the client is now a
		// no), and what they say is still written.
		s.conn.close()
		s.wg.Wait()
		s.mu.Lock()
		for _, sess := range s.sessions {
			sess.close()
		}
		s.mu.Unlock()
	}()
	r := bufio.NewReaderSize(in, 1<<16)
	for {
		line, tooLong, err := readLine(r, maxLine)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading stdin: %w", err)
		}
		if tooLong {
			s.conn.replyError(nullID, errorf(CodeInvalidRequest, "invalid request: a message is longer than %d MiB", maxLine>>20))
			continue
		}
		if len(line) == 0 {
			continue
		}
		s.handle(line)
	}
}

// handle answers one line: a response to a request of ours is delivered,
// a notification is acted on, and a request is answered in order, but for
// session/prompt, which runs on its own so that a turn under way still
// hears session/cancel and the client's answers.
func (s *server) handle(line []byte) {
	m, id, perr := parseMessage(line)
	if perr != nil {
		s.conn.replyError(id, perr)
		return
	}
	switch {
	case !m.isRequest() && !m.isNotification():
		if !s.conn.deliver(m) {
			fmt.Fprintf(s.cfg.Log, "ask acp: a response to no request of ours (id %s) was dropped\n", m.ID)
		}
	case m.isNotification():
		s.notification(m)
	case m.Method == "session/prompt":
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.answer(m)
		}()
	default:
		s.answer(m)
	}
}

// answer runs a request and writes its response.
func (s *server) answer(m *message) {
	result, err := s.request(m)
	if err != nil {
		var rpc *Error
		if !errors.As(err, &rpc) {
			rpc = errorf(CodeInternalError, "%v", err)
		}
		s.conn.replyError(m.ID, rpc)
		return
	}
	s.conn.reply(m.ID, result)
}

func (s *server) notification(m *message) {
	switch m.Method {
	case "session/cancel":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			fmt.Fprintf(s.cfg.Log, "ask acp: session/cancel with unreadable params ignored\n")
			return
		}
		if sess := s.session(p.SessionID); sess != nil {
			sess.cancelTurn()
		}
	default:
		fmt.Fprintf(s.cfg.Log, "ask acp: notification %q ignored\n", m.Method)
	}
}

func (s *server) request(m *message) (any, error) {
	switch m.Method {
	case "initialize":
		return s.initialize(m.Params)
	case "session/new":
		return s.newSession(m.Params)
	case "session/load":
		return s.loadSession(m.Params)
	case "session/prompt":
		return s.prompt(m.Params)
	case "session/set_mode":
		return s.setMode(m.Params)
	case "authenticate":
		return struct{}{}, nil // ask's keys come from its own settings
	}
	return nil, errorf(CodeMethodNotFound, "method not found: %s", m.Method)
}

// params decodes a request's params into v; what does not fit is invalid
// params.
func params(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

type clientCapabilities struct {
	FS struct {
		ReadTextFile  bool `json:"readTextFile"`
		WriteTextFile bool `json:"writeTextFile"`
	} `json:"fs"`
}

func (s *server) initialize(raw json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion *int               `json:"protocolVersion"`
		Capabilities    clientCapabilities `json:"clientCapabilities"`
	}
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, errorf(CodeInvalidParams, "invalid params: initialize needs protocolVersion")
	}
	s.mu.Lock()
	s.client = p.Capabilities
	s.mu.Unlock()
	return map[string]any{
		// The client's version if ask speaks it, else the latest ask does.
		"protocolVersion": ProtocolVersion,
		"agentCapabilities": map[string]any{
			"loadSession":        true,
			"promptCapabilities": map[string]bool{"image": true, "audio": false, "embeddedContext": true},
			"mcpCapabilities":    map[string]bool{"http": true, "sse": true},
		},
		"agentInfo":   map[string]string{"name": "ask", "title": "ask", "version": s.cfg.Version},
		"authMethods": []any{},
	}, nil
}

// sessionParams are session/new's and session/load's.
type sessionParams struct {
	SessionID  string            `json:"sessionId"`
	Cwd        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
}

func (s *server) newSession(raw json.RawMessage) (any, error) {
	var p sessionParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	sess, err := s.open(run.NewSessionID(), p)
	if err != nil {
		return nil, err
	}
	return map[string]any{"sessionId": sess.id, "modes": sess.modes()}, nil
}

func (s *server) loadSession(raw json.RawMessage) (any, error) {
	var p sessionParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	transcript, err := run.SessionTranscript(s.cfg.History, p.SessionID)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: session %s: %v", p.SessionID, err)
	}
	if transcript == nil {
		return nil, errorf(CodeInvalidParams, "invalid params: no session %s is kept (ask log lists the kept runs)", p.SessionID)
	}
	if err := s.heldHere(p.SessionID); err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	sess := s.session(p.SessionID)
	if sess == nil {
		if sess, err = s.open(p.SessionID, p); err != nil {
			return nil, err
		}
	}
	if err := sess.replay(transcript); err != nil {
		return nil, errorf(CodeInternalError, "session %s: %v", p.SessionID, err)
	}
	return map[string]any{"modes": sess.modes()}, nil
}

// heldHere refuses a kept session held in a directory this ask acp's
// sessions may not narrow to, by the check a session's cwd goes through:
// loading it would replay another project's conversation (the files its
// model read) to this editor, and append its next turns there.
func (s *server) heldHere(id string) error {
	e, err := s.cfg.History.Find(id)
	if err != nil {
		return fmt.Errorf("session %s: %v", id, err)
	}
	if e.Workdir == "" {
		return fmt.Errorf("session %s names no working directory, so it cannot be told to be this one's", id)
	}
	if _, err := narrow(s.cfg.Settings, s.cfg.Env.Wd, layer{Cwd: e.Workdir}); err != nil {
		return fmt.Errorf("session %s was held in %s: %v", id, e.Workdir, err)
	}
	return nil
}

// open builds the session id's run under the command line's policy.
func (s *server) open(id string, p sessionParams) (*session, error) {
	if p.Cwd == "" {
		return nil, errorf(CodeInvalidParams, "invalid params: cwd is required (an absolute path)")
	}
	servers, err := mcpServers(p.MCPServers)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	sess := &session{id: id, srv: s, layer: layer{Cwd: p.Cwd, MCP: servers}}
	if _, err := narrow(s.cfg.Settings, s.cfg.Env.Wd, sess.layer); err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	if err := sess.build(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.sessions[id] = sess
	s.mu.Unlock()
	return sess, nil
}

func (s *server) session(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

func (s *server) sessionFor(id string) (*session, error) {
	sess := s.session(id)
	if sess == nil {
		return nil, errorf(CodeInvalidParams, "invalid params: no open session %q: open it with session/new or session/load", id)
	}
	return sess, nil
}

func (s *server) capabilities() clientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

func (s *server) setMode(raw json.RawMessage) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
		ModeID    string `json:"modeId"`
	}
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	sess, err := s.sessionFor(p.SessionID)
	if err != nil {
		return nil, err
	}
	return struct{}{}, sess.setMode(p.ModeID)
}

// mcpServers reads a session's mcpServers: stdio, http and sse.
func mcpServers(raw []json.RawMessage) ([]mcp.Server, error) {
	var out []mcp.Server
	for i, r := range raw {
		var p struct {
			Type    string   `json:"type"`
			Name    string   `json:"name"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
			Env     []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"env"`
			URL     string `json:"url"`
			Headers []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"headers"`
		}
		if err := json.Unmarshal(r, &p); err != nil {
			return nil, fmt.Errorf("mcpServers[%d]: %v", i, err)
		}
		sv := mcp.Server{Name: p.Name, Origin: fmt.Sprintf("session mcpServers %q", p.Name)}
		switch p.Type {
		case "", "stdio":
			if p.Command == "" {
				return nil, fmt.Errorf("mcpServers[%d] (%s): a stdio server needs a command", i, p.Name)
			}
			sv.Argv = append([]string{p.Command}, p.Args...)
			if len(p.Env) > 0 {
				sv.Env = map[string]string{}
				for _, e := range p.Env {
					if strings.Contains(e.Value, "${") {
						return nil, fmt.Errorf("mcpServers[%d] (%s): env %s names a variable of ask's environment (${...}), which a session may not read", i, p.Name, e.Name)
					}
					sv.Env[e.Name] = e.Value
				}
			}
		case "http", "sse":
			if p.URL == "" {
				return nil, fmt.Errorf("mcpServers[%d] (%s): an %s server needs a url", i, p.Name, p.Type)
			}
			sv.URL, sv.Transport = p.URL, p.Type
			if len(p.Headers) > 0 {
				sv.Headers = map[string]string{}
				for _, h := range p.Headers {
					if strings.Contains(h.Value, "${") {
						return nil, fmt.Errorf("mcpServers[%d] (%s): header %s names a variable of ask's environment (${...}), which a session may not read", i, p.Name, h.Name)
					}
					sv.Headers[h.Name] = h.Value
				}
			}
		default:
			return nil, fmt.Errorf("mcpServers[%d] (%s): unknown transport %q (stdio, http or sse)", i, p.Name, p.Type)
		}
		out = append(out, sv)
	}
	return out, nil
}
