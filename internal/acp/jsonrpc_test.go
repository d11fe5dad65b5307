package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line   string
		code   int    // 0: a message
		wantID string // the id the error answers
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, 0, "1"},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x"}}`, 0, "null"},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, 0, `"a"`},
		{`not json`, CodeParseError, "null"},
		{`{"jsonrpc":"2.0","id":1,"method":`, CodeParseError, "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"x"}]`, CodeInvalidRequest, "null"},
		{`"hello"`, CodeInvalidRequest, "null"},
		{`{"jsonrpc":"1.0","id":7,"method":"x"}`, CodeInvalidRequest, "7"},
		{`{"id":7,"method":"x"}`, CodeInvalidRequest, "7"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`, CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"x"}`, CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":3,"method":""}`, CodeInvalidRequest, "3"},
		{`{"jsonrpc":"2.0","id":3,"method":7}`, CodeInvalidRequest, "3"},
		{`{"jsonrpc":"2.0","id":3}`, CodeInvalidRequest, "3"},
		{`{"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"x"}}`, CodeInvalidRequest, "3"},
		{`{"jsonrpc":"2.0","id":3,"method":"x","params":5}`, CodeInvalidRequest, "3"},
	} {
		m, id, err := parseMessage([]byte(tc.line))
		switch {
		case tc.code == 0 && (err != nil || m == nil):
			t.Errorf("%s: %v, want a message", tc.line, err)
		case tc.code != 0 && (err == nil || err.Code != tc.code):
			t.Errorf("%s: %v, want error %d", tc.line, err, tc.code)
		case tc.code != 0 && string(id) != tc.wantID:
			t.Errorf("%s: answered to id %s, want %s", tc.line, id, tc.wantID)
		}
	}
}

// TestServeKeepsGoing: every malformed line is answered with an error, the
// server goes on to the next, writes nothing but protocol lines, and
// returns nil when its input ends.
func TestServeKeepsGoing(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`garbage`,
		`{"jsonrpc":"2.0","id":1,"method":"no/such"}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":"x"}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"none","prompt":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","method":"unknown/notification"}`,
		``,
		`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":1}}`,
	}, "\n")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Serve(ctx, strings.NewReader(in), &out, Config{}); err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
			t.Fatalf("stdout carried a line that is not a JSON-RPC message: %q", sc.Text())
		}
		code := 0
		if m.Error != nil {
			code = m.Error.Code
		}
		codes[string(m.ID)] = code
	}
	want := map[string]int{"null": CodeParseError, "1": CodeMethodNotFound, "2": CodeInvalidRequest, "3": CodeInvalidParams, "4": CodeInvalidParams, "5": 0}
	for id, code := range want {
		if got, ok := codes[id]; !ok || got != code {
			t.Errorf("id %s: answered %d (answered: %v), want %d", id, got, ok, code)
		}
	}
}

func TestReadLineTooLong(t *testing.T) {
	t.Parallel()
	r := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 100)+"\nnext\nlast"), 16)
	if _, tooLong, err := readLine(r, 50); err != nil || !tooLong {
		t.Fatalf("long line: tooLong %v, err %v", tooLong, err)
	}
	for _, want := range []string{"next", "last"} {
		line, tooLong, err := readLine(r, 50)
		if err != nil || tooLong || string(line) != want {
			t.Fatalf("got %q %v %v, want %q", line, tooLong, err, want)
		}
	}
}

// FuzzFraming: whatever the input, the server answers with JSON-RPC lines
// only, never panics, and ends when the input does.
func FuzzFraming(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"x\"}\r\n\n[]",
		`{"jsonrpc":"2.0","id":2,"method":"session/set_mode","params":{"sessionId":"s","modeId":"agent"}}`,
		"\x00\xff{",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, id, err := parseMessage(data)
		if (m == nil) == (err == nil) {
			t.Fatalf("parseMessage(%q): message %v and error %v", data, m, err)
		}
		if err != nil && !json.Valid(id) {
			t.Fatalf("parseMessage(%q): error answers id %q, not JSON", data, id)
		}
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := Serve(ctx, bytes.NewReader(data), &out, Config{}); err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var m message
			if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" || (m.Error == nil && m.Result == nil) {
				t.Fatalf("input %q: wrote %q", data, line)
			}
		}
	})
}
