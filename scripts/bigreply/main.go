// Command bigreply measures what a huge reply costs ask: it serves, on
// 127.0.0.1, a Chat Completions stream whose one tool call carries MB
// megabytes of arguments (in 64 KiB deltas, as a model writing a huge file
// would), runs the ask binary against it once per size, and prints a
// markdown table of the exit code, the child's peak RSS (the kernel's
// rusage, /usr/bin/time's %M) over the input size, and the transcript's
// size. See BENCHMARKS.md, "A reply over the caps".
//
//	go build -o ask ./cmd/ask && go run ./scripts/bigreply -ask ./ask -mb 100,300
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	askBin := flag.String("ask", "./ask", "the ask binary to measure")
	sizes := flag.String("mb", "100,300", "comma-separated reply sizes in MB (10^6 bytes)")
	flag.Parse()

	var mb []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			log.Fatalf("-mb: %q is not a positive size", s)
		}
		mb = append(mb, n)
	}
	size := make(chan int, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveBigReply(w, <-size)
	}))

	fmt.Println("| reply | exit | peak RSS | RSS / reply | transcript |")
	fmt.Println("|---|---|---|---|---|")
	for _, n := range mb {
		size <- n * 1e6
		code, rssKB, transcript, err := runAsk(*askBin, "http://"+ln.Addr().String())
		if err != nil {
			log.Fatal(err)
		}
		rss := float64(rssKB) * 1024 / 1e6
		fmt.Printf("| %d MB | %d | %.0f MB | %.2f× | %.1f MB |\n", n, code, rss, rss/float64(n), float64(transcript)/1e6)
	}
}

// serveBigReply streams one write_file call with n bytes of content.
func serveBigReply(w http.ResponseWriter, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	const head = `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":`
	fmt.Fprint(w, head+`{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"big.txt\",\"content\":\""}}]}}]}`+"\n\n")
	const piece = 64 << 10
	delta := []byte(head + `{"tool_calls":[{"index":0,"function":{"arguments":"` + strings.Repeat("x", piece) + `"}}]}}]}` + "\n\n")
	for sent := 0; sent < n; sent += piece {
		if _, err := w.Write(delta); err != nil {
			return // ask hung up
		}
	}
	fmt.Fprint(w, head+`{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}}]}`+"\n\n")
	fmt.Fprint(w, head+`{},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
}

// runAsk runs one request against base and returns the exit code, the
// peak RSS in KB and the transcript's size.
func runAsk(bin, base string) (code int, rssKB int64, transcript int64, err error) {
	dir, err := os.MkdirTemp("", "bigreply")
	if err != nil {
		return 0, 0, 0, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "run.jsonl")
	cmd := exec.Command(bin, "--max-steps", "1", "--workdir", dir, "--transcript", file, "write a big file")
	cmd.Env = append(os.Environ(), "ASK_PROVIDER=openai", "ASK_BASE_URL="+base, "OPENAI_API_KEY=fake-bench-key-0000",
		"XDG_STATE_HOME="+dir, "HOME="+dir)
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			return 0, 0, 0, err
		}
	}
	if info, err := os.Stat(file); err == nil {
		transcript = info.Size()
	}
	return cmd.ProcessState.ExitCode(), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, transcript, nil
}
