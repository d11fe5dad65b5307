package providertest

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// RuneCut is k, or the start of the character k falls in: a server that
// streams text cuts it between characters, never inside one. The tests
// that turn a whole reply into a stream cut each member there.
func RuneCut(s string, k int) int {
	n := min(k, len(s))
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// Compact is the JSON text s without insignificant space, failing the
// test when s is not JSON.
func Compact(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
