package acp

import (
	"bytes"
	"context"
	"fmt"

	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/records"
)

// The option ids of a permission request.
const (
	optionAllowOnce   = "allow_once"
	optionAllowAlways = "allow_always"
	optionRejectOnce  = "reject_once"
)

// prompter is a session's approval gate: the policy asks it only what its
// rules, hooks, --yes and --safe left to a person, and it asks the client,
// one session/request_permission a call.
type prompter struct{ s *session }

func (p *prompter) Approve(ctx context.Context, calls []policy.Pending) ([]policy.Answer, error) {
	answers := make([]policy.Answer, 0, len(calls))
	for _, c := range calls {
		a, err := p.ask(ctx, c)
		if err != nil {
			return answers, err // the policy denies what has no answer
		}
		answers = append(answers, a)
	}
	return answers, nil
}

func (p *prompter) ask(ctx context.Context, c policy.Pending) (policy.Answer, error) {
	options := []map[string]string{{"optionId": optionAllowOnce, "name": "Allow once", "kind": "allow_once"}}
	if c.Always != "" {
		options = append(options, map[string]string{"optionId": optionAllowAlways, "name": "Allow always: " + c.Always, "kind": "allow_always"})
	}
	options = append(options, map[string]string{"optionId": optionRejectOnce, "name": "Reject", "kind": "reject_once"})
	toolCall := map[string]any{"toolCallId": c.ID, "title": titled(c.Name, c.Summary), "status": "pending",
		"kind": toolKind(c.Name, c.Risk, true)}
	// What is approved is seen whole: every argument.
	if len(c.Args) > 0 {
		args := map[string]string{}
		for _, a := range c.Args {
			args[a.Name] = a.Value
		}
		toolCall["rawInput"] = args
	}
	var resp struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	err := p.s.srv.conn.call(ctx, "session/request_permission",
		map[string]any{"sessionId": p.s.id, "toolCall": toolCall, "options": options}, &resp)
	if err != nil {
		return policy.No, fmt.Errorf("asking the editor: %w", err)
	}
	switch o := resp.Outcome; {
	case o.Outcome == "cancelled":
		return policy.No, errCancelled
	case o.Outcome != "selected":
		return policy.No, fmt.Errorf("the editor answered with outcome %q", o.Outcome)
	case o.OptionID == optionAllowOnce:
		return policy.Yes, nil
	case o.OptionID == optionAllowAlways && c.Always != "":
		return policy.Always, nil
	case o.OptionID == optionRejectOnce:
		return policy.No, nil
	}
	return policy.No, fmt.Errorf("the editor chose option %q, which was not offered", resp.Outcome.OptionID)
}

// replay sends a kept session's conversation back to the client as
// session/update notifications (session/load): each prompt, the answers,
// the tool calls and what became of them.
func (s *session) replay(transcript []byte) error {
	events, err := records.Read(bytes.NewReader(transcript))
	if err != nil {
		return err
	}
	s.mu.Lock()
	r := s.r
	s.mu.Unlock()
	u := &updates{s: s, workdir: r.Settings.Workdir.Value, info: r.Tool, replay: true}
	for _, ev := range events {
		u.observe(ev)
	}
	return nil
}
