package acp

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/tools"
)

// errCancelled is a turn's cause when the client sends session/cancel: it
// stops the turn as Ctrl-C does.
var errCancelled = errors.New("cancelled by the client (session/cancel)")

// session is one editor session: one kept run, whose turns are the
// prompts.
type session struct {
	id    string
	srv   *server
	layer layer

	turn sync.Mutex // one prompt at a time

	mu     sync.Mutex
	r      *run.Run // built for layer.Mode
	built  string   // the mode r was built for
	cancel context.CancelCauseFunc
}

// build (re)builds the session's run for its layer: the first time, and
// after a change of mode.
func (s *session) build() error {
	s.mu.Lock()
	l := s.layer
	s.mu.Unlock()
	set, err := narrow(s.srv.cfg.Settings, s.srv.cfg.Env.Wd, l)
	if err != nil {
		return errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	env := s.srv.cfg.Env
	env.Prompter = &prompter{s: s}
	env.Confirm = nil // nobody answers yes-or-no questions here
	env.Editor = s.editorFiles()
	r, err := run.New(s.srv.ctx, set, env)
	if err != nil {
		return fmt.Errorf("starting the session's run: %w", err)
	}
	s.mu.Lock()
	old := s.r
	s.r, s.built = r, set.Mode.Value
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

func (s *session) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r != nil {
		s.r.Close()
		s.r = nil
	}
}

// mode is the session's mode: its own, else the command line's.
func (s *session) mode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cmp.Or(s.layer.Mode, s.srv.cfg.Settings.Mode.Value)
}

// modes is the session's mode state: the modes it may take, strictest
// first (never wider than the command line's), and its current one.
func (s *session) modes() map[string]any {
	names := map[string]string{
		policy.ModeAsk:   "Ask: read-only, a few steps",
		policy.ModePlan:  "Plan: read-only, answers with a plan",
		policy.ModeAgent: "Agent: every tool, under ask's rules and approvals",
	}
	var avail []map[string]string
	for _, m := range allowedModes(s.srv.cfg.Settings) {
		avail = append(avail, map[string]string{"id": m, "name": names[m]})
	}
	return map[string]any{"currentModeId": s.mode(), "availableModes": avail}
}

func (s *session) setMode(mode string) error {
	s.mu.Lock()
	l := s.layer
	s.mu.Unlock()
	l.Mode = mode
	if _, err := narrow(s.srv.cfg.Settings, s.srv.cfg.Env.Wd, l); err != nil {
		return errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	s.mu.Lock()
	s.layer.Mode = mode
	s.mu.Unlock()
	return nil
}

func (s *session) cancelTurn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel(errCancelled)
	}
}

func (s *server) prompt(raw json.RawMessage) (any, error) {
	var p struct {
		SessionID string            `json:"sessionId"`
		Prompt    []json.RawMessage `json:"prompt"`
	}
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	sess, err := s.sessionFor(p.SessionID)
	if err != nil {
		return nil, err
	}
	text, images, err := promptText(p.Prompt)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	stop, err := sess.run(text, images)
	if err != nil {
		return nil, err
	}
	return map[string]string{"stopReason": stop}, nil
}

// run runs one turn and returns its stop reason.
func (s *session) run(prompt string, images []providers.Attachment) (string, error) {
	s.turn.Lock()
	defer s.turn.Unlock()
	s.mu.Lock()
	rebuild := s.built != cmp.Or(s.layer.Mode, s.srv.cfg.Settings.Mode.Value)
	s.mu.Unlock()
	if rebuild {
		if err := s.build(); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithCancelCause(s.srv.ctx)
	s.mu.Lock()
	s.cancel = cancel
	r := s.r
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
		cancel(nil)
	}()
	u := &updates{s: s, workdir: r.Settings.Workdir.Value, info: r.Tool}
	out := run.Output{History: s.srv.cfg.History, Observe: u.observe, OnText: u.text, OnThought: u.thought}
	res := r.Turn(ctx, s.id, prompt, images, out)
	if res.Why != "" {
		fmt.Fprintf(s.srv.cfg.Log, "ask acp: session %s: %s\n", s.id, res.Why)
	}
	switch {
	case context.Cause(ctx) == errCancelled:
		return "cancelled", nil
	case res.Status == loop.StatusCompleted:
		return "end_turn", nil
	case res.Status == loop.StatusInterrupted:
		return "cancelled", nil
	case res.Status == loop.StatusDenied:
		return "refusal", nil
	case res.Status == loop.StatusError:
		return "", errorf(CodeInternalError, "the turn failed: %s", cmp.Or(res.Why, "an error"))
	}
	// A step, time, budget or repetition limit ended it.
	return "max_turn_requests", nil
}

// promptText is a prompt's content blocks as ask's prompt: text as it is,
// embedded resources and links named and quoted, images attached.
func promptText(blocks []json.RawMessage) (string, []providers.Attachment, error) {
	var b strings.Builder
	var images []providers.Attachment
	for i, raw := range blocks {
		var c struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
			URI      string `json:"uri"`
			Name     string `json:"name"`
			Resource struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
				Blob string `json:"blob"`
			} `json:"resource"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return "", nil, fmt.Errorf("prompt[%d]: %v", i, err)
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		switch c.Type {
		case "text":
			b.WriteString(c.Text)
		case "resource_link":
			fmt.Fprintf(&b, "(the user points at %s: %s)", cmp.Or(c.Name, "a resource"), c.URI)
		case "resource":
			if c.Resource.Blob != "" {
				fmt.Fprintf(&b, "(the user attached %s, which is not text)", c.Resource.URI)
				continue
			}
			fmt.Fprintf(&b, "Contents of %s:\n```\n%s\n```", c.Resource.URI, c.Resource.Text)
		case "image":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				return "", nil, fmt.Errorf("prompt[%d]: image data is not base64: %v", i, err)
			}
			images = append(images, providers.Attachment{Name: fmt.Sprintf("image-%d", i+1), MIME: c.MimeType, Data: data})
		default:
			return "", nil, fmt.Errorf("prompt[%d]: content type %q is not one ask takes (text, image, resource, resource_link)", i, c.Type)
		}
	}
	if strings.TrimSpace(b.String()) == "" && len(images) == 0 {
		return "", nil, errors.New("the prompt is empty")
	}
	return b.String(), images, nil
}

// editorFiles are the client's fs methods that it offers: the file tools
// go through them, the path confined to the workdir first (internal/tools).
func (s *session) editorFiles() tools.EditorFiles {
	var ef tools.EditorFiles
	caps := s.srv.capabilities()
	if caps.FS.ReadTextFile {
		ef.Read = func(ctx context.Context, path string) (string, error) {
			var resp struct {
				Content string `json:"content"`
			}
			err := s.srv.conn.call(ctx, "fs/read_text_file", map[string]string{"sessionId": s.id, "path": path}, &resp)
			return resp.Content, err
		}
	}
	if caps.FS.WriteTextFile {
		ef.Write = func(ctx context.Context, path, content string) error {
			return s.srv.conn.call(ctx, "fs/write_text_file", map[string]string{"sessionId": s.id, "path": path, "content": content}, nil)
		}
	}
	return ef
}
