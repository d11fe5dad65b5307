package providers

import (
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"
)

// CacheMark is the cache breakpoint of Anthropic's Messages API, which
// OpenRouter passes on in Chat Completions content parts: the prefix up to
// and including the marked block is cached for five minutes.
var CacheMark = json.RawMessage(`{"type":"ephemeral"}`)

// MaxCacheMarks is how many breakpoints Anthropic takes in one request;
// one more is an error.
const MaxCacheMarks = 4

// CachePoints are the messages a request marks, most useful first: the
// last message, so that the next step can read all of this one, and the
// last message before the latest assistant reply, which was the previous
// request's last message. Marking that one again makes this request read
// what the previous one wrote however far back it lies: Anthropic looks
// for an earlier entry only about 20 blocks back from a breakpoint, and a
// step with many parallel calls adds more.
func CachePoints(msgs []json.RawMessage) []int {
	if len(msgs) == 0 {
		return nil
	}
	last := len(msgs) - 1
	points := []int{last}
	for i := last; i > 0; i-- {
		if gjson.GetBytes(msgs[i], "role").String() == "assistant" {
			if i-1 != last {
				points = append(points, i-1)
			}
			break
		}
	}
	return points
}

// CountCacheMarks counts the breakpoints messages already carry on their
// content blocks (a conversation handed to `ask provider request`, or
// continued from elsewhere), which count against MaxCacheMarks.
func CountCacheMarks(msgs []json.RawMessage) int {
	n := 0
	for _, m := range msgs {
		gjson.GetBytes(m, "content").ForEach(func(_, block gjson.Result) bool {
			if block.Get("cache_control").Exists() {
				n++
			}
			return true
		})
	}
	return n
}

// TextBlocks turns a message whose content is a non-empty string into
// the same message with one text block, the form a cache mark needs.
// Requests that mark their prefix send every message that is not the
// model's own in this form, marked or not, so that a message keeps its
// bytes when its mark moves on to a later one. Other messages are
// returned as they are.
func TextBlocks(msg json.RawMessage) json.RawMessage {
	content := gjson.GetBytes(msg, "content")
	if content.Type != gjson.String || content.Str == "" || gjson.GetBytes(msg, "role").String() == "assistant" {
		return msg
	}
	block := Object(
		Field{Key: "type", Value: json.RawMessage(`"text"`)},
		Field{Key: "text", Value: json.RawMessage(content.Raw)})
	out, err := SetRaw(msg, "content", append(append([]byte{'['}, block...), ']'))
	if err != nil {
		return msg
	}
	return out
}

// MarkLastBlock puts CacheMark on the last content block of msg that
// takes one (after TextBlocks); takes says which blocks can carry a mark.
// It reports whether it added a mark: not when no block can take one, nor
// when that block has one already, nor when the content is not blocks (the
// model's own string, which a mark would replace).
func MarkLastBlock(msg json.RawMessage, takes func(block gjson.Result) bool) (json.RawMessage, bool) {
	msg = TextBlocks(msg)
	content := gjson.GetBytes(msg, "content")
	if !content.IsArray() {
		return msg, false
	}
	blocks := content.Array()
	for i := len(blocks) - 1; i >= 0; i-- {
		if !takes(blocks[i]) {
			continue
		}
		if blocks[i].Get("cache_control").Exists() {
			return msg, false
		}
		out, err := SetRaw(msg, "content."+strconv.Itoa(i)+".cache_control", CacheMark)
		return out, err == nil
	}
	return msg, false
}
