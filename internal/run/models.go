package run

import (
	"context"
	"fmt"
	"io"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// ListModels asks the provider the settings name for the models it offers
// now, from its own listing endpoint, page after page (`ask models`). A
// missing key is a *catalog.MissingKeyError; an HTTP error an
// *providers.APIError, after the settings' retries.
func ListModels(ctx context.Context, s Settings, env Env) ([]providers.Model, error) {
	row, proto, err := s.Protocol()
	if err != nil {
		return nil, err
	}
	lister, ok := proto.(providers.ModelLister)
	if row.LocalProgram || !ok {
		return nil, fault.Usagef("%s runs a local program: it has no model listing", row.Name)
	}
	if err := checkBaseURL(s.BaseURL); err != nil {
		return nil, err
	}
	key := s.Key.Value.Reveal()
	if key == "" && row.NeedsKey() && !row.PublicModels {
		return nil, &catalog.MissingKeyError{Provider: row.Name, Vars: row.KeyEnv}
	}
	caller := &providers.Caller{Provider: row.Name, Protocol: proto, BaseURL: s.BaseURL.Value, Key: key,
		Header: row.Header, HTTP: env.HTTP, Retries: s.Retries.Value}
	var all []providers.Model
	page := ""
	for range providers.MaxModelPages {
		body, err := getBody(ctx, caller, lister.ModelsURL(s.BaseURL.Value, page))
		if err != nil {
			return nil, err
		}
		models, next, err := lister.ParseModels(body)
		if err != nil {
			return nil, asKind(Provider, fmt.Errorf("%s: the model listing: %w", row.Name, err))
		}
		all = append(all, models...)
		if next == "" || next == page {
			return all, nil
		}
		page = next
	}
	return nil, asKind(Provider, fmt.Errorf("%s: %w", row.Name, providers.ErrTooManyPages))
}

// getBody reads one page of a listing, at most MaxResponseBytes of it.
func getBody(ctx context.Context, c *providers.Caller, url string) ([]byte, error) {
	resp, err := c.Get(ctx, url, providers.Hooks{})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, providers.MaxResponseBytes+1))
	switch {
	case err != nil:
		return nil, asKind(Provider, fmt.Errorf("%s: read the model listing: %w", c.Provider, err))
	case len(body) > providers.MaxResponseBytes:
		return nil, asKind(Provider, fmt.Errorf("%s: %w", c.Provider, providers.ErrResponseTooLarge))
	}
	return body, nil
}
