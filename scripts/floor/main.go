// Command floor is the least a tool-calling loop can do, in the standard
// library alone: the reference scripts/bench.sh sets ask against. It takes
// the flags the bench gives ask, streams Chat Completions requests with two
// tools (shell, read_file), runs the calls and prints the answer. It
// validates, confines and records nothing.
//
// Built with -tags stack it is the same loop on what ask is built on
// (stack.go): the bench measures it too, to tell what of ask's start is
// its own.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const tools = `[
{"type":"function","function":{"name":"shell","description":"Run a shell command and return its output.",
 "parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}},
{"type":"function","function":{"name":"read_file","description":"Read the first lines of a file.",
 "parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]`

type call struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type message struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCalls  []call `json:"tool_calls,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// options are the flags the bench gives; args.go reads them with package
// flag, stack.go (-tags stack) with urfave/cli.
type options struct {
	base, model, workdir, prompt string
	steps                        int
	version                      bool
}

func main() {
	opt := parseArgs()
	if opt.version {
		fmt.Println("floor version 1")
		return
	}
	msgs := []message{{Role: "user", Content: opt.prompt}}
	for range opt.steps {
		reply, err := send(opt.base, opt.model, msgs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		msgs = append(msgs, reply)
		if len(reply.ToolCalls) == 0 {
			fmt.Println(reply.Content)
			return
		}
		for _, c := range reply.ToolCalls {
			msgs = append(msgs, message{Role: "tool", ToolCallID: c.ID, Content: runTool(opt.workdir, c)})
		}
	}
	fmt.Fprintln(os.Stderr, "floor: out of steps")
	os.Exit(1)
}

// send makes one streamed request and gathers the assistant's message.
func send(base, model string, msgs []message) (message, error) {
	body, _ := json.Marshal(map[string]any{"model": model, "messages": msgs, "tools": json.RawMessage(tools), "stream": true})
	req, _ := http.NewRequest("POST", strings.TrimSuffix(base, "/")+"/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+os.Getenv("OPENAI_API_KEY"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return message{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return message{}, fmt.Errorf("status %s", resp.Status)
	}
	out := message{Role: "assistant"}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index int `json:"index"`
						call
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return message{}, err
		}
		for _, ch := range chunk.Choices {
			out.Content += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				for len(out.ToolCalls) <= tc.Index {
					out.ToolCalls = append(out.ToolCalls, call{Type: "function"})
				}
				c := &out.ToolCalls[tc.Index]
				c.ID += tc.ID
				c.Function.Name += tc.Function.Name
				c.Function.Arguments += tc.Function.Arguments
			}
		}
	}
	return out, sc.Err()
}

// runTool runs one call and returns its result or its error as text.
func runTool(dir string, c call) string {
	var args struct{ Command, Path string }
	if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil {
		return "invalid arguments: " + err.Error()
	}
	switch c.Function.Name {
	case "shell":
		cmd := exec.Command("/bin/sh", "-c", args.Command)
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput()
		return string(out)
	case "read_file":
		f, err := os.Open(filepath.Join(dir, args.Path))
		if err != nil {
			return err.Error()
		}
		defer f.Close()
		var b strings.Builder
		sc := bufio.NewScanner(f)
		for n := 1; n <= 2000 && sc.Scan(); n++ {
			fmt.Fprintf(&b, "%d: %s\n", n, sc.Text())
		}
		return b.String()
	}
	return "unknown tool " + c.Function.Name
}
