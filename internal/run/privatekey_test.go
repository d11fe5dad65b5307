package run

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPrivateKeyScrubbed(t *testing.T) {
	dir := t.TempDir()
	pem := "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgabcdefghijklmnop\nqrstuvwxyz0123456789ABCDEFGH\n-----END PRIVATE KEY-----\n"
	os.WriteFile(filepath.Join(dir, "k.pem"), []byte(pem), 0o600)
	got := privateKey("${KEYS}/k.pem", func(v string) string {
		if v == "KEYS" {
			return dir
		}
		return ""
	})
	for _, want := range []string{
		pem[:len(pem)-1],
		"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgabcdefghijklmnop",
		"qrstuvwxyz0123456789ABCDEFGH",
		"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgabcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("%q is not scrubbed: %q", want, got)
		}
	}
	if got := privateKey("", os.Getenv); got != nil {
		t.Errorf("no file: %q", got)
	}
}
