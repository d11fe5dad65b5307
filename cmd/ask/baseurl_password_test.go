package main

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
)

// A password in the base URL is used for the request, and shown or
// recorded nowhere: not by -v, not in the events, the transcript, the last
// run's file, `ask config` or `ask provider list`.
func TestBaseURLPasswordNeverShows(t *testing.T) {
	t.Parallel()
	const password = "s3cret-PASSWORD-in-url"
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "ok"})
	defer srv.Close()
	base := strings.Replace(srv.URL, "http://", "http://alice:"+password+"@", 1)
	state := t.TempDir()
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	env := map[string]string{"ASK_PROVIDER": "lmstudio", "ASK_MODEL": "local-model", "XDG_STATE_HOME": state}
	outputs := map[string]string{}
	r := runAsk(t, askEnv{env: env}, "-v", "--events", "--transcript", transcript, "--base-url", base, "q")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr: %s", r.code, r.stderr)
	}
	outputs["run stdout"], outputs["run stderr"] = r.stdout, r.stderr
	if !strings.Contains(r.stderr, "POST http://alice:xxxxx@") {
		t.Errorf("-v does not show the URL with its password masked: %s", r.stderr)
	}
	env["LMSTUDIO_BASE_URL"] = base
	for _, args := range [][]string{{"config", "--json"}, {"provider", "list"}} {
		r := runAsk(t, askEnv{env: env}, args...)
		outputs[strings.Join(args, " ")] = r.stdout + r.stderr
	}
	for k, v := range readTree(t, state) {
		outputs[k] = v
	}
	for k, v := range readTree(t, filepath.Dir(transcript)) {
		outputs[k] = v
	}
	for name, s := range outputs {
		if i := strings.Index(s, password); i >= 0 {
			t.Errorf("the password shows in %s: …%s…", name, s[max(0, i-60):min(len(s), i+40)])
		}
	}
	h := srv.Headers()
	if len(h) != 1 || h[0].Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte("alice:"+password)) {
		t.Errorf("the server did not get the URL's credentials: %v", h)
	}
}
