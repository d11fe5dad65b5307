package responses

import (
	"testing"

	"github.com/ask-cli/ask/internal/providers/providertest"
)

// validateCreateResponse validates a request body against
// components.schemas.CreateResponse of the official OpenAPI file.
func validateCreateResponse(t testing.TB, body []byte) error {
	t.Helper()
	return providertest.ValidateSpec(t, providertest.SpecPath(t, "openai-openapi.yaml"), "CreateResponse", body)
}

// spec is the schema of a request body in the official API description.
var spec = providertest.Spec{File: "openai-openapi.yaml", Schema: "CreateResponse",
	Refused: `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":{"url":"x"}}]}]}`}
