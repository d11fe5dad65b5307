package fakeprovider

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitInsideRunes(t *testing.T) {
	for _, s := range []string{"", "ascii only", "é", "naïve — 日本 🎉!"} {
		pieces := SplitInsideRunes([]byte(s))
		if got := string(bytes.Join(pieces, nil)); got != s {
			t.Errorf("%q: pieces join to %q", s, got)
		}
		for _, p := range pieces[:len(pieces)-1] {
			if utf8.Valid(p) {
				t.Errorf("%q: piece %q does not end inside a character", s, p)
			}
		}
	}
}

func TestStartStepsRepeatsTheLast(t *testing.T) {
	srv := StartSteps(Serve(HTMLPage(502, "Bad Gateway")), Serve(Reply{Text: "ok"}))
	defer srv.Close()
	var got []string
	for range 3 {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"n":1}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got = append(got, resp.Status+" "+string(b[:min(len(b), 15)]))
	}
	if !strings.HasPrefix(got[0], "502") || !strings.Contains(got[0], "<!DOCTYPE") || !strings.HasPrefix(got[1], "200") || got[1] != got[2] {
		t.Errorf("responses: %q", got)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests recorded, want 3", n)
	}
}
