package batch

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzLineID: the id a pin reads from a line is the id ParseTask reads,
// wherever ParseTask reads one, and reading never fails on any bytes.
func FuzzLineID(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","prompt":"p"}`, `{"prompt":"p","id":"b"}`, `{"id":"c","prompt":"p",`, `{"x":{"id":"no"},"id":"d"}`,
		`{"id":1}`, `[{"id":"a"}]`, `{"id":"a\u0000b","prompt":"p"}`, "\xef\xbb\xbf{\"id\":\"e\"}", `{"id":"f","id":"g"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		id := LineID(line)
		task, err := ParseTask(line, 1)
		if err == nil && id != task.ID {
			t.Errorf("LineID = %q, ParseTask's id %q, of %q", id, task.ID, line)
		}
	})
}

// FuzzReadDone: any file reads as results or as one clear error, never
// a panic, and what is kept is whole lines of it.
func FuzzReadDone(f *testing.F) {
	ok := Result{ID: "a", Status: "completed"}.Encode()
	for _, s := range []string{"", string(ok), string(ok) + `{"id":"b"`, "hello\n", string(ok) + string(ok), `{"line":3,"status":"invalid","exit_code":2}` + "\n", "\x00\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		done, keep, err := ReadDone(bytes.NewReader(data))
		if err != nil {
			if !strings.Contains(err.Error(), "not a result line of ask batch") && !strings.Contains(err.Error(), "longer than") {
				t.Errorf("an unclear error: %v", err)
			}
			return
		}
		if keep < 0 || keep > int64(len(data)) || keep > 0 && data[keep-1] != '\n' {
			t.Errorf("keep %d of %d bytes is not whole lines", keep, len(data))
		}
		if done.Count < 0 || done.Failed < 0 || done.Failed > done.Count {
			t.Errorf("counts %d, %d failed", done.Count, done.Failed)
		}
	})
}

// FuzzParseShardAndRate: the flags' parsers take any text, and what they
// take is in range.
func FuzzParseShardAndRate(f *testing.F) {
	for _, s := range []string{"0/4", "auto/4", " 3/4", "auto/0", "9/x", "10/s", "0.5/m", "1e309/s", "-0/s"} {
		f.Add(s, "2")
	}
	f.Fuzz(func(t *testing.T, s, index string) {
		sh, err := ParseShard(s, func(string) string { return index })
		if err == nil && (sh.N < 1 || sh.I < 0 || sh.I >= sh.N) {
			t.Errorf("ParseShard(%q) = %+v", s, sh)
		}
		if gap, err := ParseRate(s); err == nil && gap <= 0 {
			t.Errorf("ParseRate(%q) = %v", s, gap)
		}
	})
}
