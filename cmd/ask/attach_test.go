package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
)

// -a sends the file with the prompt; what the provider does not take is a
// usage error (exit 2) before any request.
func TestAttachFlag(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "internal", "providers", "testdata", "attach"))
	png, pdf, txt := filepath.Join(dir, "pixel.png"), filepath.Join(dir, "tiny.pdf"), filepath.Join(dir, "notes.txt")
	tests := []struct {
		name    string
		args    []string
		code    int
		stderr  string
		request string // what the one request must hold; "" for no request
	}{
		{"image and PDF", []string{"-a", png, "-a", pdf, "what is this?"}, exitOK, "", `"type":"file"`},
		{"both forms of the flag", []string{"-a", png, "--attach=" + pdf, "what is this?"}, exitOK, "", `"type":"file"`},
		{"with --temperature", []string{"--temperature", "0.3", "-a", png, "what is this?"}, exitOK, "", `"temperature":0.3`},
		{"with --reasoning", []string{"--reasoning", "high", "-a", png, "what is this?"}, exitOK, "", `"reasoning_effort":"high"`},
		{"a PDF to ollama", []string{"-p", "ollama", "-a", pdf, "hi"}, exitUsage, "-a " + pdf + ": ollama takes images only", ""},
		{"an image to deepseek", []string{"-p", "deepseek", "-a", png, "hi"}, exitUsage, "deepseek takes no attachments", ""},
		{"a text file", []string{"-a", txt, "hi"}, exitUsage, "not an image (PNG, JPEG, WebP, GIF) or a PDF", ""},
		{"a missing file", []string{"-a", "nope.png", "hi"}, exitUsage, "-a nope.png: no such file or directory", ""},
		{"a local program", []string{"-p", "command", "--command", "cat", "-a", png, "hi"}, exitUsage, "command takes no attachments", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "a pixel"})
			defer srv.Close()
			r := runAsk(t, askEnv{server: srv, env: map[string]string{"DEEPSEEK_API_KEY": "fake-test-key-0000"}}, tt.args...)
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
