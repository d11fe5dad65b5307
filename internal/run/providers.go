package run

import (
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/stage"
)

// Providers are the catalog's providers as `ask provider list` shows
// them, each as a run with -p NAME would have it: the environment's and
// the config file's base URL, key variables, key and model. Flags in in
// are ignored: each row is its own provider's.
func Providers(in Inputs) ([]stage.ProviderInfo, error) {
	rows := stage.Providers(in.Getenv)
	for i := range rows {
		var flags Settings
		flags.Provider = Given(rows[i].Name, "ask provider list")
		s, err := Resolve(Inputs{Flags: flags, Getenv: in.Getenv, Config: in.Config, Wd: in.Wd})
		if err != nil {
			return nil, err
		}
		if s.BaseURL.Value != "" {
			rows[i].BaseURL = providers.RedactURL(s.BaseURL.Value)
		}
		rows[i].KeyEnv = append([]string{}, s.KeyVars...)
		rows[i].KeySet = s.Key.Value != ""
		if s.Model.Value != "" {
			rows[i].Model = s.Model.Value
		}
	}
	return rows, nil
}
