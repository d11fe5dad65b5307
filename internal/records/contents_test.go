package records

import (
	"bytes"
	"encoding/json"
	"testing"
)

// A file.changed event carries contents through a transcript byte for
// byte: text as a string, anything else in base64.
func TestContentsRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		before, after []byte
		wantJSON      string
	}{
		{"text", []byte("a\n"), []byte("b\n"), `"before":"a\n","after":"b\n"`},
		{"binary", []byte{0xff, 0x00}, []byte("ok"), `"before_base64":"/wA=","after":"ok"`},
		{"empty after", []byte("a"), []byte{}, `"before":"a","after":""`},
	} {
		var c Contents
		c.SetBefore(tc.before)
		c.SetAfter(tc.after)
		c.AfterSHA256 = "00"
		line, err := Marshal(Event{Type: TypeFileChanged, Change: &Change{Path: "p", Action: "edited", Tool: "edit_file"}, Contents: &c})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(line, []byte(tc.wantJSON+`,"after_sha256":"00"`)) {
			t.Errorf("%s: %s, want it to hold %s", tc.name, line, tc.wantJSON)
		}
		var back Event
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatal(err)
		}
		before, okB := back.BeforeBytes()
		after, okA := back.AfterBytes()
		if !okB || !okA || !bytes.Equal(before, tc.before) || !bytes.Equal(after, tc.after) || back.AfterSHA256 != "00" {
			t.Errorf("%s: read back %q %v, %q %v", tc.name, before, okB, after, okA)
		}
	}
	// Without contents, nothing is recorded: neither side reads back.
	var none Contents
	if _, ok := none.BeforeBytes(); ok {
		t.Error("no before recorded, but BeforeBytes says there is")
	}
}
