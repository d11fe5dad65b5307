// Command fakeprovider is a scripted Chat Completions server on 127.0.0.1
// for benchmarks and demos: it answers each request at once with the reply
// its script holds for that step, prints its base URL on stdout, and logs
// every request (step, size, arrival and reply times) as a JSON line.
//
//	fakeprovider -calls 5 -tool shell -args '{"command":"echo step %d"}'
//	fakeprovider -script replies.json -log requests.jsonl
//	fakeprovider -latency 100ms -log requests.jsonl   # a slow model; the log names each prompt
//
// A request's step is one more than the assistant messages it carries, so
// one server serves any number of runs, one after another or at once,
// without being reset. Replies are rendered by internal/fakeprovider.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "fakeprovider: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("fakeprovider", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on (127.0.0.1 only)")
	script := fs.String("script", "", "JSON `FILE` with one reply a step: [{\"text\":...,\"calls\":[{\"id\",\"name\",\"arguments\"}]}]")
	calls := fs.Int("calls", 0, "without -script: this many steps that each call -tool, then the answer")
	tool := fs.String("tool", "shell", "the tool the scripted steps call")
	argsFmt := fs.String("args", `{"command":"echo step %d"}`, "the calls' arguments; %d, if present, is the step, so that no call repeats")
	answer := fs.String("answer", "Done.", "the final answer")
	logPath := fs.String("log", "", "append one JSON line a request to `FILE` (default stderr)")
	latency := fs.Duration("latency", 0, "wait `D` before each reply, as a model takes its time")
	if err := fs.Parse(args); err != nil {
		return err
	}
	replies, err := loadScript(*script, *calls, *tool, *argsFmt, *answer)
	if err != nil {
		return err
	}
	if host, _, err := net.SplitHostPort(*addr); err != nil || host != "127.0.0.1" {
		return fmt.Errorf("-addr %q: listen on 127.0.0.1 (such as 127.0.0.1:0)", *addr)
	}
	logOut := io.Writer(os.Stderr)
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("-log: %w", err)
		}
		defer f.Close()
		logOut = f
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/v1\n", ln.Addr())
	os.Stdout.Sync()

	handler := newServer(replies, logOut)
	handler.latency = *latency
	srv := &http.Server{Handler: handler}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	go func() { <-stop; srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loadScript reads the replies from file, or makes n calls of tool then the
// answer.
func loadScript(file string, n int, tool, argsFmt, answer string) ([]fakeprovider.Reply, error) {
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("-script: %w", err)
		}
		var steps []struct {
			Text  string               `json:"text"`
			Calls []providers.ToolCall `json:"calls"`
		}
		if err := json.Unmarshal(data, &steps); err != nil {
			return nil, fmt.Errorf("-script %s: %w", file, err)
		}
		if len(steps) == 0 {
			return nil, fmt.Errorf("-script %s holds no reply", file)
		}
		replies := make([]fakeprovider.Reply, len(steps))
		for i, s := range steps {
			replies[i] = fakeprovider.Reply{Text: s.Text, Calls: s.Calls}
		}
		return replies, nil
	}
	if n < 0 {
		return nil, fmt.Errorf("-calls %d: give 0 or more", n)
	}
	if n >= 3 && !strings.Contains(argsFmt, "%d") {
		return nil, errors.New("-args must contain %d with -calls 3 or more, so that no call repeats (ask stops a run whose model repeats a call, answered the same way, five times in a row)")
	}
	var replies []fakeprovider.Reply
	for step := 1; step <= n; step++ {
		replies = append(replies, fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call(fmt.Sprintf("call_%d", step), tool, withStep(argsFmt, step))}})
	}
	return append(replies, fakeprovider.Reply{Text: answer}), nil
}

// withStep puts the step into the arguments where they ask for it.
func withStep(argsFmt string, step int) string {
	if !strings.Contains(argsFmt, "%d") {
		return argsFmt
	}
	return fmt.Sprintf(argsFmt, step)
}

// rendered is one reply in both of its forms, rendered once.
type rendered struct{ stream, plain []byte }

type server struct {
	replies []rendered
	mu      sync.Mutex // guards log and seq
	log     io.Writer
	seq     int
	latency time.Duration
}

func newServer(replies []fakeprovider.Reply, log io.Writer) *server {
	s := &server{log: log}
	for _, r := range replies {
		s.replies = append(s.replies, rendered{stream: fakeprovider.ChatStream(r), plain: fakeprovider.ChatJSON(r)})
	}
	return s
}

// logLine is what the log says of one request. Times are Unix nanoseconds,
// so that a benchmark can set them against its own clock.
type logLine struct {
	Seq     int   `json:"seq"`
	Step    int   `json:"step"`
	Bytes   int   `json:"bytes"`
	Arrived int64 `json:"arrived_ns"` // the request's headers were read
	Replied int64 `json:"replied_ns"` // the reply was ready; its bytes follow at once
	Status  int   `json:"status"`
	// Prompt is the request's first user message, so that a test can
	// count the requests each task made.
	Prompt string `json:"prompt,omitempty"`
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, _ := io.ReadAll(r.Body)
	step := 1 + len(gjson.GetBytes(body, `messages.#(role=="assistant")#`).Array())
	status, contentType, reply := http.StatusOK, "application/json", []byte(nil)
	switch {
	case r.Method != http.MethodPost:
		status = http.StatusMethodNotAllowed
		reply = []byte(`{"error":{"message":"fake provider: POST a chat completion request","type":"invalid_request_error"}}`)
	case step > len(s.replies):
		status = http.StatusInternalServerError
		reply = fmt.Appendf(nil, `{"error":{"message":"fake provider: the script has %d steps, this is step %d","type":"server_error"}}`, len(s.replies), step)
	case gjson.GetBytes(body, "stream").Bool():
		contentType, reply = "text/event-stream", s.replies[step-1].stream
	default:
		reply = s.replies[step-1].plain
	}
	if s.latency > 0 {
		select {
		case <-time.After(s.latency):
		case <-r.Context().Done():
			return
		}
	}
	// The line is logged before the reply is sent, so that it is in the
	// log by the time the client has the reply and can exit.
	s.logRequest(logLine{Step: step, Bytes: len(body), Arrived: arrived.UnixNano(), Replied: time.Now().UnixNano(), Status: status,
		Prompt: fakeprovider.FirstUserText(body)})
	w.Header().Set("Content-Type", contentType)
	// With its length known, a flushed reply is complete: no closing chunk
	// is still to come.
	w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
	w.WriteHeader(status)
	w.Write(reply)
	w.(http.Flusher).Flush()
}

func (s *server) logRequest(l logLine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	l.Seq = s.seq
	line, _ := json.Marshal(l)
	s.log.Write(append(line, '\n'))
}
