package ollama

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"
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

// DefaultNumCtx is the window Ollama runs a model at when its Modelfile
// sets no num_ctx (the server's default, OLLAMA_CONTEXT_LENGTH).
const DefaultNumCtx = 4096

// WindowRequest implements providers.WindowReader: POST /api/show.
func (p *Protocol) WindowRequest(baseURL, model string) (string, string, []byte) {
	body, _ := json.Marshal(map[string]string{"model": model})
	return http.MethodPost, strings.TrimSuffix(p.ModelsURL(baseURL, ""), "/tags") + "/show", body
}

// ParseWindow implements providers.WindowReader. /api/show answers with
// the Modelfile's parameters as text ("num_ctx 8192\ntemperature 0.7")
// and model_info, whose "<architecture>.context_length" is the most the
// model was trained for. The window is num_ctx when the Modelfile sets it,
// else DefaultNumCtx within the model's most: what Ollama runs it at, which
// the requests then name as options.num_ctx so that nothing is cut silently.
func (*Protocol) ParseWindow(body []byte, _ string) (int, error) {
	if !gjson.ValidBytes(body) {
		return 0, providers.Malformed("the model's details are not JSON")
	}
	for _, line := range strings.Split(gjson.GetBytes(body, "parameters").String(), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				return n, nil
			}
		}
	}
	most := 0
	gjson.GetBytes(body, "model_info").ForEach(func(k, v gjson.Result) bool {
		if strings.HasSuffix(k.String(), ".context_length") && v.Int() > 0 {
			most = int(v.Int())
			return false
		}
		return true
	})
	if most > 0 {
		return min(most, DefaultNumCtx), nil
	}
	return DefaultNumCtx, nil
}
