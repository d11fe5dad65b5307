package stage

import (
	"strings"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// ProviderInfo is one row of `ask provider list`. It names the key
// variables and whether one is set, never a key.
type ProviderInfo struct {
	Name        string   `json:"name"`
	Protocol    string   `json:"protocol"`
	BaseURL     string   `json:"base_url"`
	KeyEnv      []string `json:"key_env"`
	KeySet      bool     `json:"key_set"`
	KeyRequired bool     `json:"key_required"`
	NativeTools bool     `json:"native_tools"`
	Streaming   bool     `json:"streaming"`
	Model       string   `json:"default_model"`
}

// Providers are the catalog's providers as `ask provider list` shows them,
// their base URLs and keys as getenv sets them (a URL's password hidden).
func Providers(getenv func(string) string) []ProviderInfo {
	var rows []ProviderInfo
	for _, p := range catalog.All() {
		row := ProviderInfo{Name: p.Name, Protocol: p.Protocol, KeyEnv: append([]string{}, p.KeyEnv...),
			KeyRequired: p.NeedsKey(), NativeTools: p.NativeTools, Streaming: p.Streaming, Model: p.DefaultModel}
		if p.BaseURL != "" {
			row.BaseURL = providers.RedactURL(p.ResolveBaseURL("", getenv))
		}
		for _, v := range p.KeyEnv {
			row.KeySet = row.KeySet || strings.TrimSpace(getenv(v)) != ""
		}
		rows = append(rows, row)
	}
	return rows
}
