package anthropic

import (
	"cmp"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// ModelsURL implements providers.ModelLister: GET /v1/models, paged by
// after_id, newest first.
func (*Protocol) ModelsURL(baseURL, page string) string {
	return providers.PagedModelsURL(baseURL, "limit", "after_id", page)
}

// ParseModels implements providers.ModelLister. A page is
// {"data":[{"type":"model","id","display_name","created_at"}],"has_more",
// "first_id","last_id"}; newer responses add max_input_tokens and
// max_tokens. The next page starts after last_id while has_more.
func (*Protocol) ParseModels(body []byte) ([]providers.Model, string, error) {
	if !gjson.ValidBytes(body) {
		return nil, "", providers.Malformed("the model listing is not JSON")
	}
	data := gjson.GetBytes(body, "data")
	if !data.IsArray() {
		return nil, "", providers.Malformed("the model listing has no data array")
	}
	var out []providers.Model
	for _, m := range data.Array() {
		id := m.Get("id").String()
		if id == "" {
			continue
		}
		out = append(out, providers.Model{ID: id, Name: cmp.Or(m.Get("display_name").String(), id),
			Created: m.Get("created_at").String(), ContextLength: int(m.Get("max_input_tokens").Int()),
			MaxOutputTokens: int(m.Get("max_tokens").Int())})
	}
	next := ""
	if gjson.GetBytes(body, "has_more").Bool() {
		if next = gjson.GetBytes(body, "last_id").String(); next == "" {
			return nil, "", providers.Malformed("the model listing says it has more but gives no last_id")
		}
	}
	return out, next, nil
}
