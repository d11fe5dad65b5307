package textproto_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/openai"
	"github.com/ask-cli/ask/internal/providers/textproto"
)

// toolbox answers every call with "NAME ran" and remembers the calls.
type toolbox struct {
	mu    sync.Mutex
	calls []string
}

func (b *toolbox) Call(_ context.Context, name, args string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, name+" "+args)
	return name + " ran", false
}

var loopTools = []providers.Tool{
	{Name: "read_file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "write_file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
}

// runText runs the real loop against a scripted Chat Completions server
// whose replies are text, through the text tool protocol.
func runText(t *testing.T, form textproto.Form, stream bool, replies ...string) (*loop.Result, *toolbox, [][]byte) {
	t.Helper()
	return runTextSteps(t, form, stream, 0, replies...)
}

// runTextSteps is runText with a step limit (0: the loop's default).
func runTextSteps(t *testing.T, form textproto.Form, stream bool, maxSteps int, replies ...string) (*loop.Result, *toolbox, [][]byte) {
	t.Helper()
	var rs []fakeprovider.Reply
	for _, r := range replies {
		rs = append(rs, fakeprovider.Reply{Text: r})
	}
	srv := fakeprovider.Start(rs...)
	defer srv.Close()
	proto := textproto.Wrap(openai.New(), form, loopTools)
	box := &toolbox{}
	res := loop.Run(context.Background(), loop.Config{
		Model:  &providers.Caller{Provider: "fake", Protocol: proto, BaseURL: srv.URL, Model: "m", HTTP: &http.Client{}},
		System: "sys", Prompt: "what is in a.txt?", Tools: loopTools, Toolbox: box, Stream: stream,
		MaxSteps: maxSteps,
	})
	for i, req := range srv.Requests() {
		if gjson.GetBytes(req, "tools").Exists() {
			t.Errorf("request %d declares native tools", i+1)
		}
	}
	return res, box, srv.Requests()
}

// lastUser is the text of a request's last message.
func lastUser(req []byte) string {
	msgs := gjson.GetBytes(req, "messages").Array()
	return msgs[len(msgs)-1].Get("content").String()
}

func TestLoopCallThenAnswer(t *testing.T) {
	for _, stream := range []bool{false, true} {
		res, box, reqs := runText(t, textproto.JSON, stream,
			"Let me look.\n```json\n{\"tool\": \"read_file\", \"parameters\": {\"path\": \"a.txt\"}, \"terminate\": false}\n```",
			"It says alpha.")
		if res.Status != loop.StatusCompleted || res.Answer != "It says alpha." || res.Steps != 2 || len(box.calls) != 1 {
			t.Fatalf("stream=%v: result %+v, calls %q", stream, res, box.calls)
		}
		if box.calls[0] != `read_file {"path": "a.txt"}` {
			t.Errorf("ran %q", box.calls[0])
		}
		msgs := gjson.GetBytes(reqs[1], "messages").Array()
		// system, user, assistant (verbatim), results as one user message
		if len(msgs) != 4 || msgs[2].Get("role").String() != "assistant" || !strings.Contains(msgs[2].Get("content").String(), `"tool": "read_file"`) {
			t.Errorf("history = %s", gjson.GetBytes(reqs[1], "messages").Raw)
		}
		if got := lastUser(reqs[1]); got != "<tool_result call=\"1\" tool=\"read_file\">\nread_file ran\n</tool_result>" {
			t.Errorf("results message = %q", got)
		}
		if sys := msgs[0].Get("content").String(); !strings.HasPrefix(sys, "sys\n\n# Tools") {
			t.Errorf("system = %q", sys)
		}
	}
}

func TestLoopStopsAfterThreeUnreadableReplies(t *testing.T) {
	bad := `{"tool": "read_file", "parameters": {"path": "a.txt"`
	res, box, reqs := runText(t, textproto.JSON, false, bad, `{"tool": "nope"}`, bad, "never asked")
	if res.Status != loop.StatusParseFailures || res.Steps != 3 || len(box.calls) != 0 || len(reqs) != 3 {
		t.Fatalf("result %+v, %d requests", res, len(reqs))
	}
	for i, want := range []string{"ends before its closing brace", `unknown tool "nope"`} {
		if got := lastUser(reqs[i+1]); !strings.Contains(got, want) || !strings.Contains(got, `{"tool": "TOOL_NAME"`) {
			t.Errorf("correction %d = %q", i+1, got)
		}
	}
}

// TestLoopParseFailureStopsAtTheStepLimit: a correction is one more
// request, which the step limit forbids like any other.
func TestLoopParseFailureStopsAtTheStepLimit(t *testing.T) {
	bad := `{"tool": "read_file", "parameters": {"path": "a.txt"`
	res, box, reqs := runTextSteps(t, textproto.JSON, false, 2, bad, bad, "never asked")
	if res.Status != loop.StatusMaxSteps || res.Steps != 2 || len(box.calls) != 0 || len(reqs) != 2 {
		t.Fatalf("result %+v, %d requests", res, len(reqs))
	}
}

func TestLoopParseFailuresMustBeInARow(t *testing.T) {
	bad := "```bash\nread_file\n```"
	res, box, _ := runText(t, textproto.Markdown, false, bad, bad, "```bash\nread_file a.txt\n```", bad, bad, "done")
	if res.Status != loop.StatusCompleted || res.Answer != "done" || len(box.calls) != 1 || res.Steps != 6 {
		t.Fatalf("result %+v, calls %q", res, box.calls)
	}
}

func TestLoopTerminate(t *testing.T) {
	res, box, reqs := runText(t, textproto.JSON, false,
		"Writing it now.\n"+`{"tool": "write_file", "parameters": {"path": "v", "content": "1"}, "terminate": true}`)
	if res.Status != loop.StatusCompleted || res.Steps != 1 || len(box.calls) != 1 || res.Answer != "Writing it now." || len(reqs) != 1 {
		t.Fatalf("result %+v, calls %q", res, box.calls)
	}
	// Without text of its own, the answer is the last result.
	res, _, _ = runText(t, textproto.JSON, false, `{"tool": "read_file", "parameters": {"path": "v"}, "terminate": true}`)
	if res.Status != loop.StatusCompleted || res.Answer != "read_file ran" {
		t.Fatalf("result %+v", res)
	}
}

// resultBlock is one <tool_result> block of a results message: its opening
// tag and its content.
type resultBlock struct{ tag, content string }

func resultBlocks(t *testing.T, msg string) []resultBlock {
	t.Helper()
	var blocks []resultBlock
	for _, part := range strings.Split(msg, "</tool_result>") {
		part = strings.TrimPrefix(part, "\n")
		if part == "" {
			continue
		}
		tag, content, ok := strings.Cut(part, "\n")
		if !ok || !strings.HasPrefix(tag, "<tool_result ") {
			t.Fatalf("not a results message: %q", msg)
		}
		blocks = append(blocks, resultBlock{tag, content})
	}
	return blocks
}

// A reply with runnable calls and broken ones runs the runnable ones and
// answers every call, in the reply's order: the broken ones with the error
// and the form expected.
func TestLoopAnswersBrokenCallsAmongResults(t *testing.T) {
	reply := "I'll read them.\n" +
		`{"tool": "read_file", "parameters": {"path": "a.txt"}}` + "\n" +
		`{"tool": "cat", "parameters": {"file": "b.txt"}}` + "\n" +
		`{"tool": "write_file", "parameters": {"path": "c"}}` + "\n" +
		`{"tool": "read_file", "parameters": {"path": 3}}` + "\n" +
		`{"tool": "read_file", "parameters": {"path": "d.txt",}}` + "\n" +
		`{"tool": "read_file", "parameters": {"path": "e.txt"}}`
	for _, stream := range []bool{false, true} {
		res, box, reqs := runText(t, textproto.JSON, stream, reply, "Done.")
		if res.Status != loop.StatusCompleted || res.Answer != "Done." || len(reqs) != 2 {
			t.Fatalf("stream=%v: result %+v, %d requests", stream, res, len(reqs))
		}
		ran := append([]string{}, box.calls...)
		sort.Strings(ran) // the calls run concurrently
		if want := []string{`read_file {"path": "a.txt"}`, `read_file {"path": "e.txt"}`}; strings.Join(ran, "|") != strings.Join(want, "|") {
			t.Errorf("ran %q, want %q", ran, want)
		}
		blocks := resultBlocks(t, lastUser(reqs[1]))
		want := []struct{ tag, content string }{
			{`<tool_result call="1" tool="read_file">`, "read_file ran"},
			{`<tool_result call="2" error="true">`, `unknown tool "cat"`},
			{`<tool_result call="3" tool="write_file" error="true">`, `missing required parameter "content"`},
			{`<tool_result call="4" tool="read_file" error="true">`, `"path" must be`},
			{`<tool_result call="5" tool="read_file" error="true">`, "not valid JSON"},
			{`<tool_result call="6" tool="read_file">`, "read_file ran"},
		}
		if len(blocks) != len(want) {
			t.Fatalf("stream=%v: %d results, want %d:\n%s", stream, len(blocks), len(want), lastUser(reqs[1]))
		}
		for i, w := range want {
			b := blocks[i]
			if b.tag != w.tag || !strings.Contains(b.content, w.content) {
				t.Errorf("result %d = %s %q, want %s holding %q", i+1, b.tag, b.content, w.tag, w.content)
			}
			if strings.Contains(w.tag, "error") {
				if !strings.HasPrefix(b.content, "This call could not be read and did not run: ") || !strings.Contains(b.content, `{"tool": "TOOL_NAME", "parameters": {"NAME": "VALUE"}, "terminate": false}`) {
					t.Errorf("result %d does not give the error and the form expected: %q", i+1, b.content)
				}
			}
		}
		if !strings.Contains(blocks[2].content, "For write_file: write_file(path: string") {
			t.Errorf("the write_file error does not show its parameters: %q", blocks[2].content)
		}
	}
}

// The markdown form answers a bash block's broken lines the same way.
func TestLoopAnswersBrokenMarkdownCalls(t *testing.T) {
	res, box, reqs := runText(t, textproto.Markdown, false,
		"```bash\nwrite_file\n```\nand\n```bash\nread_file a.txt\n```", "Done.")
	if res.Status != loop.StatusCompleted || len(box.calls) != 1 || box.calls[0] != `read_file {"path":"a.txt"}` {
		t.Fatalf("result %+v, calls %q", res, box.calls)
	}
	blocks := resultBlocks(t, lastUser(reqs[1]))
	if len(blocks) != 2 || blocks[0].tag != `<tool_result call="1" tool="write_file" error="true">` ||
		!strings.Contains(blocks[0].content, `missing required parameter "path"`) || !strings.Contains(blocks[0].content, "```bash\nwrite_file ") ||
		blocks[1].tag != `<tool_result call="2" tool="read_file">` {
		t.Errorf("results message = %q", lastUser(reqs[1]))
	}
}

// Only a reply whose calls all fail counts towards the three parse
// failures that stop a run: a reply that ran something resets the count.
func TestLoopMixedReplyIsNotAParseFailure(t *testing.T) {
	bad := `{"tool": "cat", "parameters": {}}`
	mixed := bad + "\n" + `{"tool": "read_file", "parameters": {"path": "a.txt"}}`
	res, box, reqs := runText(t, textproto.JSON, false, bad, bad, mixed, bad, bad, "done")
	if res.Status != loop.StatusCompleted || res.Answer != "done" || res.Steps != 6 || len(box.calls) != 1 {
		t.Fatalf("result %+v, calls %q", res, box.calls)
	}
	// All-bad replies are answered with the correction, the mixed one with
	// results.
	if got := lastUser(reqs[2]); !strings.HasPrefix(got, "Your reply tried to call a tool") {
		t.Errorf("answer to the second bad reply = %q", got)
	}
	if got := lastUser(reqs[3]); !strings.HasPrefix(got, `<tool_result call="1" error="true">`) || !strings.Contains(got, `<tool_result call="2" tool="read_file">`) {
		t.Errorf("answer to the mixed reply = %q", got)
	}
}

// gate allows every call and remembers which it was asked about.
type gate struct {
	mu    sync.Mutex
	asked []string
}

func (g *gate) Check(_ context.Context, calls []providers.ToolCall) []policy.Verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]policy.Verdict, len(calls))
	for i, c := range calls {
		g.asked = append(g.asked, c.Name)
		out[i].Allowed = true
	}
	return out
}

// A call that cannot be read never reaches the policy (nobody is asked to
// approve what cannot run) and is no denial, yet it is one of the run's
// calls, answered with its error.
func TestUnreadableCallsSkipThePolicy(t *testing.T) {
	reply := `{"tool": "read_file", "parameters": {"path": "a.txt"}}` + "\n" +
		`{"tool": "write_file", "parameters": {"path": "c"}}`
	srv := fakeprovider.Start(fakeprovider.Reply{Text: reply}, fakeprovider.Reply{Text: "Done."})
	defer srv.Close()
	proto := textproto.Wrap(openai.New(), textproto.JSON, loopTools)
	g := &gate{}
	res := loop.Run(context.Background(), loop.Config{
		Model:  &providers.Caller{Provider: "fake", Protocol: proto, BaseURL: srv.URL, Model: "m", HTTP: &http.Client{}},
		Prompt: "q", Tools: loopTools, Toolbox: &toolbox{}, Gate: g,
	})
	if res.Status != loop.StatusCompleted {
		t.Fatalf("status %s: %v", res.Status, res.Err)
	}
	if strings.Join(g.asked, ",") != "read_file" {
		t.Errorf("the policy was asked about %q, want only the readable read_file", g.asked)
	}
	if len(res.Calls) != 2 || res.Calls[0].IsError || !res.Calls[1].IsError || res.Calls[1].Denied ||
		res.Calls[1].Name != "write_file" || !strings.Contains(res.Calls[1].Content, `missing required parameter "content"`) {
		t.Errorf("calls %+v: want read_file run, then write_file answered with its error and not denied", res.Calls)
	}
	if len(res.Denials) != 0 {
		t.Errorf("denials %+v, want none", res.Denials)
	}
}
