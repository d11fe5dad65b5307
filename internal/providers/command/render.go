package command

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// Render turns a Plain request body into the text a command reads on
// stdin, in the format described in the package documentation.
func Render(body []byte) (string, error) {
	if !gjson.ValidBytes(body) {
		return "", fmt.Errorf("command: render: the request is not JSON")
	}
	var b strings.Builder
	section := func(role, text string) {
		b.WriteString("[" + role + "]\n")
		b.WriteString(strings.TrimRight(text, "\n"))
		b.WriteString("\n\n")
	}
	if sys := gjson.GetBytes(body, "system").String(); sys != "" {
		section("system", sys)
	}
	for _, m := range gjson.GetBytes(body, "messages").Array() {
		section(m.Get("role").String(), m.Get("content").String())
	}
	b.WriteString("[assistant]\n")
	return b.String(), nil
}
