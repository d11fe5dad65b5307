package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// One MCP client drives ask mcp serve, started as a client starts it (a
// command on stdio), through a whole run: the model's command needs
// approval and the serve command's --allow-tool gives it, the client hears
// of the progress, gets the answer, and a second call is cancelled.
func TestMCPServeOverStdio(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	model := fakeprovider.StartFunc(func(body []byte) fakeprovider.Reply {
		switch prompt := fakeprovider.FirstUserText(body); {
		case strings.Contains(prompt, "slow"):
			<-release
			return fakeprovider.Reply{Text: "too late"}
		case strings.Contains(string(body), `"role":"tool"`):
			return fakeprovider.Reply{Text: "Wrote it."}
		default:
			return fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "shell", `{"command":"echo from-serve > out.txt"}`)}}
		}
	})
	defer model.Close()
	defer close(release) // before the model closes: Close waits for its handlers
	wd, home := t.TempDir(), t.TempDir()
	cmd := exec.Command("ask", "--allow-tool", "shell:echo*", "mcp", "serve")
	cmd.Dir = wd
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"ASK_PROVIDER=openai", "ASK_BASE_URL="+model.URL, "OPENAI_API_KEY=fake-test-not-a-real-key-0000")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	progress := make(chan string, 20)
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { progress <- r.Params.Message },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr %s)", err, stderr.String())
	}
	defer session.Close()

	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "ask", Arguments: map[string]any{"prompt": "write out.txt"},
		Meta: sdk.Meta{"progressToken": 7}})
	if err != nil || res.IsError {
		t.Fatalf("ask: %v %+v (stderr %s)", err, res, stderr.String())
	}
	if got := res.Content[0].(*sdk.TextContent).Text; got != "Wrote it." {
		t.Errorf("answer %q", got)
	}
	if data, _ := os.ReadFile(filepath.Join(wd, "out.txt")); string(data) != "from-serve\n" {
		t.Errorf("out.txt = %q", data)
	}
	var said []string
	for len(progress) > 0 {
		said = append(said, <-progress)
	}
	if !strings.Contains(strings.Join(said, "|"), "shell") {
		t.Errorf("progress %q does not name the tool call", said)
	}

	callCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := session.CallTool(callCtx, &sdk.CallToolParams{Name: "ask", Arguments: map[string]any{"prompt": "slow one"}})
		done <- err
	}()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(string(lastRequest(model)), "slow one"); {
		if time.Now().After(deadline) {
			t.Fatal("the slow run never reached the model")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
	// The server is still there for the next call.
	if _, err := session.ListTools(ctx, nil); err != nil {
		t.Errorf("after a cancel: %v", err)
	}
}

func lastRequest(s *fakeprovider.Server) []byte {
	reqs := s.Requests()
	if len(reqs) == 0 {
		return nil
	}
	return reqs[len(reqs)-1]
}
