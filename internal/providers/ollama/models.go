package ollama

import (
	"cmp"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// ModelsURL implements providers.ModelLister: GET /api/tags, the models
// pulled to this server, one page.
func (*Protocol) ModelsURL(baseURL, _ string) string {
	base := strings.TrimRight(baseURL, "/")
	if strings.HasSuffix(base, "/api") {
		return base + "/tags"
	}
	return base + "/api/tags"
}

// ParseModels implements providers.ModelLister. The listing is
// {"models":[{"name","model","modified_at","size","digest","details":{
// "family","parameter_size","quantization_level"}}]}; Created is when the
// model was pulled (modified_at).
func (*Protocol) ParseModels(body []byte) ([]providers.Model, string, error) {
	if !gjson.ValidBytes(body) {
		return nil, "", providers.Malformed("the model listing is not JSON")
	}
	models := gjson.GetBytes(body, "models")
	if models.Exists() && !models.IsArray() {
		return nil, "", providers.Malformed("the model listing's models is not an array")
	}
	var out []providers.Model
	for _, m := range models.Array() {
		id := cmp.Or(m.Get("model").String(), m.Get("name").String())
		if id == "" {
			continue
		}
		name := cmp.Or(m.Get("name").String(), id)
		if d := strings.TrimSpace(m.Get("details.parameter_size").String() + " " + m.Get("details.quantization_level").String()); d != "" {
			name += " (" + d + ")"
		}
		out = append(out, providers.Model{ID: id, Name: name, Created: m.Get("modified_at").String(), Size: m.Get("size").Int()})
	}
	return out, "", nil
}
