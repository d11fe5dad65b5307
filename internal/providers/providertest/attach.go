package providertest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
)

// AttachDir is the directory of the small files the attachment tests
// send: internal/providers/testdata/attach.
func AttachDir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("providertest: cannot tell where its source is")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "attach")
}

// Attachment reads one of those files as -a would send it.
func Attachment(t testing.TB, name string) providers.Attachment {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(AttachDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	mime, looks := providers.SniffAttachment(data)
	if mime == "" {
		t.Fatalf("%s sniffs as %s", name, looks)
	}
	return providers.Attachment{Name: name, MIME: mime, Data: data}
}

// Attachments are one file of each kind -a takes: PNG, JPEG, WebP, GIF
// and PDF.
func Attachments(t testing.TB) []providers.Attachment {
	t.Helper()
	var out []providers.Attachment
	for _, name := range []string{"pixel.png", "tiny.jpg", "pixel.webp", "pixel.gif", "tiny.pdf"} {
		out = append(out, Attachment(t, name))
	}
	return out
}
