package providers

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"
)

func TestMarkLastBlock(t *testing.T) {
	t.Parallel()
	notThinking := func(b gjson.Result) bool { return b.Get("type").String() != "thinking" }
	tests := []struct {
		name, msg, want string
		marked          bool
	}{
		{name: "a user's string becomes a marked text block",
			msg:  `{"role":"user","content":"hi"}`,
			want: `{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}`, marked: true},
		{name: "the last block that takes a mark gets it",
			msg:  `{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"thinking"}]}`,
			want: `{"role":"assistant","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"thinking"}]}`, marked: true},
		{name: "a block marked already is left as it is",
			msg:  `{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}`,
			want: `{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}`},
		// The model's own string is echoed as it came; marking it would
		// have replaced the text with a block holding only the mark.
		{name: "the model's string content keeps its text",
			msg:  `{"role":"assistant","content":"0"}`,
			want: `{"role":"assistant","content":"0"}`},
		{name: "no content",
			msg:  `{"role":"assistant"}`,
			want: `{"role":"assistant"}`},
		{name: "no block takes a mark",
			msg:  `{"role":"assistant","content":[{"type":"thinking"}]}`,
			want: `{"role":"assistant","content":[{"type":"thinking"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, marked := MarkLastBlock(json.RawMessage(tt.msg), notThinking)
			if string(got) != tt.want || marked != tt.marked {
				t.Errorf("MarkLastBlock(%s) = %s, %v; want %s, %v", tt.msg, got, marked, tt.want, tt.marked)
			}
		})
	}
}
