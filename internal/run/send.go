package run

import (
	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// ForSending is the settings of `ask provider send` for a request body,
// with its provider: the model the body names, unless --model was typed
// (a provider that puts the model in the URL needs it there), and no
// tools (it sends a body, and runs none). A provider that runs a local
// program has nothing to send a body to.
func (s Settings) ForSending(body []byte) (catalog.Provider, Settings, error) {
	prov, _, err := s.Protocol()
	if err != nil {
		return prov, s, err
	}
	if prov.LocalProgram {
		return prov, s, fault.Usagef("%s runs a local program, not an HTTP API: there is nothing to send a body to", prov.Name)
	}
	if m := gjson.GetBytes(body, "model").String(); m != "" && s.Model.Source != "flag --model" {
		s.Model = Given(m, "the request body")
	}
	s.NoTools = Given(true, "ask provider send")
	return prov, s, nil
}
