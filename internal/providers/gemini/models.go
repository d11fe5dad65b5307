package gemini

import (
	"cmp"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// ModelsURL implements providers.ModelLister: GET /v1beta/models, paged
// by pageToken.
func (*Protocol) ModelsURL(baseURL, page string) string {
	return providers.PagedModelsURL(baseURL, "pageSize", "pageToken", page)
}

// ParseModels implements providers.ModelLister. A page is {"models":[{
// "name":"models/ID","displayName","inputTokenLimit","outputTokenLimit",
// "supportedGenerationMethods":[...]}],"nextPageToken"}; only the models
// that take generateContent, which ask sends, are listed.
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
		id := strings.TrimPrefix(m.Get("name").String(), "models/")
		if id == "" || !generates(m.Get("supportedGenerationMethods")) {
			continue
		}
		out = append(out, providers.Model{ID: id, Name: cmp.Or(m.Get("displayName").String(), id),
			ContextLength: int(m.Get("inputTokenLimit").Int()), MaxOutputTokens: int(m.Get("outputTokenLimit").Int())})
	}
	return out, gjson.GetBytes(body, "nextPageToken").String(), nil
}

func generates(methods gjson.Result) bool {
	for _, m := range methods.Array() {
		if m.String() == "generateContent" {
			return true
		}
	}
	return false
}
