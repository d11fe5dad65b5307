package providertest

import (
	"bytes"
	"strings"

	"github.com/ask-cli/ask/internal/providers"
)

// Deltas reads a whole stream of p as the loop does, with the text shown
// as it arrived, delta by delta.
func Deltas(p providers.Protocol, body []byte) (*providers.Turn, []string, error) {
	var deltas []string
	turn, err := providers.ReadStream(bytes.NewReader(body), p.Framing(), p.NewStream(), func(d string) {
		deltas = append(deltas, d)
	})
	return turn, deltas, err
}

// Stream reads a whole stream of p as the loop does, with the text shown
// as it arrived.
func Stream(p providers.Protocol, body []byte) (*providers.Turn, string, error) {
	turn, deltas, err := Deltas(p, body)
	return turn, strings.Join(deltas, ""), err
}
