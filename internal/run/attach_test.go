package run

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers/providertest"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/settings"
)

// recordedServer answers every request with a recorded response body and
// keeps the request bodies it was sent.
type recordedServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func serveRecorded(t *testing.T, fixture string) *recordedServer {
	t.Helper()
	reply, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	rs := &recordedServer{}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fakeprovider.AboutModels(w, r) {
			return // Ollama's /api/show: no step
		}
		b, _ := io.ReadAll(r.Body)
		rs.mu.Lock()
		rs.bodies = append(rs.bodies, b)
		rs.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	}))
	t.Cleanup(rs.Close)
	return rs
}

// A run with -a sends the files in the first user message in each
// protocol's own form, against a recorded reply of that protocol; the
// transcript keeps them, so that replay --check rebuilds the same request.
func TestAttachmentsReachEachProtocol(t *testing.T) {
	t.Parallel()
	const fixtures = "../providers/"
	tests := []struct {
		provider, keyVar, fixture string
		files                     []string
		// paths in the first request's body that must hold these values
		want map[string]string
	}{
		{"openai", "OPENAI_API_KEY", "openai/testdata/openai-chat/fantasy-gpt4o-tool-turn2.json", []string{"pixel.png", "tiny.pdf"}, map[string]string{
			"messages.1.content.1.type":           "image_url",
			"messages.1.content.1.image_url.url":  "data:image/png;base64,iVBORw0KGgo",
			"messages.1.content.2.file.file_data": "data:application/pdf;base64,JVBERi0",
			"messages.1.content.2.file.filename":  "tiny.pdf",
			"messages.1.content.0.text":           "describe",
		}},
		{"openai-responses", "OPENAI_API_KEY", "responses/testdata/fantasy-gpt4o-tool-turn2.json", []string{"pixel.png", "tiny.pdf"}, map[string]string{
			"input.0.content.1.type":      "input_image",
			"input.0.content.1.image_url": "data:image/png;base64,iVBORw0KGgo",
			"input.0.content.2.type":      "input_file",
			"input.0.content.2.file_data": "data:application/pdf;base64,JVBERi0",
		}},
		{"anthropic", "ANTHROPIC_API_KEY", "anthropic/testdata/fantasy-sonnet4-tool-turn2.json", []string{"pixel.png", "tiny.pdf"}, map[string]string{
			"messages.0.content.0.type":              "image",
			"messages.0.content.0.source.type":       "base64",
			"messages.0.content.0.source.media_type": "image/png",
			"messages.0.content.0.source.data":       "iVBORw0KGgo",
			"messages.0.content.1.type":              "document",
			"messages.0.content.1.source.media_type": "application/pdf",
			"messages.0.content.2.text":              "describe",
		}},
		{"gemini", "GEMINI_API_KEY", "gemini/testdata/fantasy-25flash-tool-turn2.json", []string{"pixel.webp", "tiny.pdf"}, map[string]string{
			"contents.0.parts.0.inlineData.mimeType": "image/webp",
			"contents.0.parts.0.inlineData.data":     "UklGR",
			"contents.0.parts.1.inlineData.mimeType": "application/pdf",
			"contents.0.parts.2.text":                "describe",
		}},
		{"ollama", "", "ollama/testdata/fantasy-pr63-gptoss120b-tool-turn2.json", []string{"pixel.gif", "tiny.jpg"}, map[string]string{
			"messages.1.images.0": "R0lGODlh",
			"messages.1.images.1": "/9j/4A",
			"messages.1.content":  "describe",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			t.Parallel()
			srv := serveRecorded(t, fixtures+tt.fixture)
			vars := map[string]string{}
			if tt.keyVar != "" {
				vars[tt.keyVar] = "fake-test-key-0000"
			}
			e := testEnv(t, vars)
			var attach []string
			for _, f := range tt.files {
				attach = append(attach, filepath.Join(providertest.AttachDir(t), f))
			}
			s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: Settings{Values: settings.Values{
				Provider: Given(tt.provider, "test"), Model: Given("some-model", "test"), BaseURL: Given(srv.URL, "test"),
				NoStream: Given(true, "test"), NoTools: Given(true, "test"), Attach: Given(attach, "flag --attach"),
			}}})
			if err != nil {
				t.Fatal(err)
			}
			transcript := execute(t, s, e, "describe", func(res *Result) {
				if res.Status != loop.StatusCompleted || !strings.Contains(res.Answer, "40") {
					t.Fatalf("status %s, answer %q, err %v", res.Status, res.Answer, res.Err)
				}
			})
			if len(srv.bodies) != 1 {
				t.Fatalf("%d requests", len(srv.bodies))
			}
			for path, want := range tt.want {
				if got := gjson.GetBytes(srv.bodies[0], path).String(); !strings.HasPrefix(got, want) {
					t.Errorf("%s = %.60q, want it to start %q", path, got, want)
				}
			}

			// Replayed with the files gone, the request is the same.
			events, err := records.Read(bytes.NewReader(transcript))
			if err != nil {
				t.Fatal(err)
			}
			if n := len(events[0].Settings.Attachments); n != len(tt.files) {
				t.Fatalf("run.started records %d attachments", n)
			}
			replayed, prompt, rp, err := FromTranscript(events, ReplayOptions{Check: true, Workdir: e.Wd})
			if err != nil {
				t.Fatal(err)
			}
			re := testEnv(t, nil)
			re.Replay = rp
			execute(t, replayed, re, prompt, nil)
			if diffs := rp.Report(); diffs != "" {
				t.Errorf("the replay differs:\n%s", diffs)
			}
		})
	}
}

// What a provider does not take, or a file that is not an image or a PDF,
// or one too large, is a usage error before anything is sent.
func TestAttachmentsRefused(t *testing.T) {
	t.Parallel()
	dir := providertest.AttachDir(t)
	big := filepath.Join(t.TempDir(), "big.png")
	png, _ := os.ReadFile(filepath.Join(dir, "pixel.png"))
	if err := os.WriteFile(big, append(png, make([]byte, 6<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		provider, file, want string
	}{
		{"ollama", "tiny.pdf", "ollama takes images only, and tiny.pdf is a PDF"},
		{"lmstudio", "tiny.pdf", "takes images only"},
		{"deepseek", "pixel.png", "deepseek takes no attachments"},
		{"command", "pixel.png", "command takes no attachments"},
		{"openai", "notes.txt", "its contents are text/plain; charset=utf-8, not an image"},
		{"openai", "missing.png", "no such file or directory"},
		{"anthropic", big, "and anthropic takes images of up to 5 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+filepath.Base(tt.file), func(t *testing.T) {
			t.Parallel()
			e := testEnv(t, map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "DEEPSEEK_API_KEY": "k"})
			file := tt.file
			if !filepath.IsAbs(file) {
				file = filepath.Join(dir, file)
			}
			s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: Settings{Values: settings.Values{
				Provider: Given(tt.provider, "test"), Model: Given("m", "test"), BaseURL: Given("http://127.0.0.1:9", "test"),
				Command: Given("true", "test"), Attach: Given([]string{file}, "flag --attach"),
			}}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = New(t.Context(), s, e)
			if kind, ok := fault.KindOf(err); !ok || kind != Usage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v (kind %v), want a usage error saying %q", err, kind, tt.want)
			}
		})
	}
}

// -a sends the file with the prompt; what the provider does not take is a
// usage error (exit 2) before any request.
func TestAttachFlag(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.Abs(filepath.Join("..", "providers", "testdata", "attach"))
	png, pdf, txt := filepath.Join(dir, "pixel.png"), filepath.Join(dir, "tiny.pdf"), filepath.Join(dir, "notes.txt")
	tests := []struct {
		name    string
		flags   []any
		code    int
		stderr  string
		request string // what the one request must hold; "" for no request
	}{
		{"image and PDF", []any{"attach", []string{png, pdf}}, fault.ExitOK, "", `"type":"file"`},
		{"with --temperature", []any{"temperature", 0.3, "attach", png}, fault.ExitOK, "", `"temperature":0.3`},
		{"with --reasoning", []any{"reasoning", "high", "attach", png}, fault.ExitOK, "", `"reasoning_effort":"high"`},
		{"a PDF to ollama", []any{"provider", "ollama", "attach", pdf}, fault.ExitUsage, "-a " + pdf + ": ollama takes images only", ""},
		{"an image to deepseek", []any{"provider", "deepseek", "attach", png}, fault.ExitUsage, "deepseek takes no attachments", ""},
		{"a text file", []any{"attach", txt}, fault.ExitUsage, "not an image (PNG, JPEG, WebP, GIF) or a PDF", ""},
		{"a missing file", []any{"attach", "nope.png"}, fault.ExitUsage, "-a nope.png: no such file or directory", ""},
		{"a local program", []any{"provider", "command", "command", "cat", "attach", png}, fault.ExitUsage, "command takes no attachments", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "a pixel"})
			defer srv.Close()
			r := newWorld(t, srv).with("DEEPSEEK_API_KEY", "fake-test-key-0000").ask("what is this?", tt.flags...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
			reqs := srv.Requests()
			switch {
			case tt.request == "" && len(reqs) > 0:
				t.Errorf("%d requests were sent", len(reqs))
			case tt.request != "" && (len(reqs) != 1 || !strings.Contains(string(reqs[0]), tt.request) || !strings.Contains(string(reqs[0]), `"image_url":{"url":"data:image/png;base64,`)):
				t.Errorf("requests %d, the first without the files", len(reqs))
			}
		})
	}
}
