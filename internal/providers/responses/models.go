package responses

import (
	"strings"

	"github.com/ask-cli/ask/internal/providers"
)

// ModelsURL implements providers.ModelLister: GET /models, one page.
func (*Protocol) ModelsURL(baseURL, _ string) string {
	return strings.TrimRight(baseURL, "/") + "/models"
}

// ParseModels implements providers.ModelLister.
func (*Protocol) ParseModels(body []byte) ([]providers.Model, string, error) {
	models, err := providers.ParseOpenAIModels(body)
	return models, "", err
}
