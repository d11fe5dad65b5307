package acp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
)

// session/load takes any kept run's id: an editor, or whatever drives
// ask acp in one project, must not load a session of another directory,
// whose replay hands it that project's conversation (the files its model
// read), and whose next turn would be appended to that run.
func TestLoadRefusesASessionOfAnotherDirectory(t *testing.T) {
	t.Parallel()
	home, otherWd, wd := t.TempDir(), t.TempDir(), t.TempDir()
	fake := fakeprovider.Start(fakeprovider.Reply{Text: "the other project's secret is hunter2"})
	defer fake.Close()

	other, stopOther := startClient(t, testConfig(t, fake.URL, home, otherWd, nil))
	other.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	sess := other.call("session/new", map[string]any{"cwd": otherWd, "mcpServers": []any{}})
	var created struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(sess.Result, &created)
	other.call("session/prompt", map[string]any{"sessionId": created.SessionID, "prompt": []any{map[string]string{"type": "text", "text": "read the secrets"}}})
	stopOther()

	c, stop := startClient(t, testConfig(t, fake.URL, home, wd, nil))
	defer stop()
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	load := c.call("session/load", map[string]any{"sessionId": created.SessionID, "cwd": wd, "mcpServers": []any{}})
	for _, u := range c.updates {
		if strings.Contains(string(u), "hunter2") {
			t.Fatalf("another directory's session was replayed to this editor: %s", u)
		}
	}
	if load.Error == nil || load.Error.Code != CodeInvalidParams {
		t.Errorf("session/load of another directory's run: %s %v, want invalid params", load.Result, load.Error)
	}
}
