package providers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// The kind of a file comes from its bytes, whatever its name says.
func TestSniffAttachment(t *testing.T) {
	t.Parallel()
	dir := providertest.AttachDir(t)
	for name, want := range map[string]string{
		"pixel.png":      providers.MIMEPNG,
		"tiny.jpg":       providers.MIMEJPEG,
		"pixel.webp":     providers.MIMEWebP,
		"pixel.gif":      providers.MIMEGIF,
		"tiny.pdf":       providers.MIMEPDF,
		"junk-first.pdf": providers.MIMEPDF,
		"notes.txt":      "",
	} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got, looks := providers.SniffAttachment(data); got != want {
			t.Errorf("%s: %q (looks like %q), want %q", name, got, looks, want)
		}
	}
	for _, tt := range []struct{ data, looks string }{
		{"", "text/plain; charset=utf-8"},
		{"PK\x03\x04zip", "application/zip"},
		{"RIFF\x00\x00\x00\x00WAVEfmt ", "audio/wave"},
	} {
		if got, looks := providers.SniffAttachment([]byte(tt.data)); got != "" || looks != tt.looks {
			t.Errorf("%q: %q, looks like %q; want none, %q", tt.data, got, looks, tt.looks)
		}
	}
}

// Any bytes: a kind or what they look like, never both, never neither.
func FuzzSniffAttachment(f *testing.F) {
	for _, name := range []string{"pixel.png", "pixel.webp", "tiny.pdf", "notes.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "attach", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mime, looks := providers.SniffAttachment(data)
		if (mime == "") == (looks == "") {
			t.Fatalf("%q: mime %q, looks %q", data, mime, looks)
		}
		if mime != "" && !strings.HasPrefix(mime, "image/") && mime != providers.MIMEPDF {
			t.Fatalf("%q: %s", data, mime)
		}
	})
}
