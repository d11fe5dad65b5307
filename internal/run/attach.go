package run

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/ask-cli/ask/internal/providers"
)

// loadAttachments reads the files of -a and checks them against what the
// provider takes, before anything is sent: the kind by the bytes (never
// the name), the size by the provider's limits. A replay sends the
// recorded ones.
func (r *Run) loadAttachments() ([]providers.Attachment, error) {
	if rp := r.env.Replay; rp != nil {
		return rp.attachments, nil
	}
	paths := r.Settings.Attach.Value
	if len(paths) == 0 {
		return nil, nil
	}
	if r.Provider.Attach == nil {
		return nil, fault.Usagef("-a %s: %s takes no attachments; choose a provider that takes images or PDFs (ask provider list)", paths[0], r.Provider.Name)
	}
	var out []providers.Attachment
	var total int64
	for _, p := range paths {
		a, err := readAttachment(AbsPath(r.env.Wd, p), max(r.Provider.Attach.MaxImage, r.Provider.Attach.MaxPDF))
		if err != nil {
			return nil, fault.Usagef("-a %s: %v", p, err)
		}
		if err := r.Provider.CheckAttachment(a, total); err != nil {
			return nil, fault.Usagef("-a %s: %v", p, err)
		}
		total += int64(len(a.Data))
		out = append(out, a)
	}
	return out, nil
}

// readAttachment reads a file of at most limit bytes and tells its kind.
func readAttachment(path string, limit int64) (providers.Attachment, error) {
	f, err := os.Open(path)
	if err != nil {
		return providers.Attachment{}, unwrapPath(err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && !info.Mode().IsRegular() {
		return providers.Attachment{}, fmt.Errorf("not a regular file")
	}
	// One byte past the limit is enough for the size check to refuse it.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return providers.Attachment{}, unwrapPath(err)
	}
	mime, looks := providers.SniffAttachment(data)
	if mime == "" {
		return providers.Attachment{}, fmt.Errorf("its contents are %s, not an image (PNG, JPEG, WebP, GIF) or a PDF", looks)
	}
	return providers.Attachment{Name: filepath.Base(path), MIME: mime, Data: data}, nil
}

// unwrapPath drops the path from an *os.PathError: the message names the
// flag's value already.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
