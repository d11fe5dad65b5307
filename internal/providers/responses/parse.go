package responses

import (
	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// ParseResponse reads a Response object. Every successful response carries
// "error": null, which is not an error; an error object (a failed response,
// or an error envelope passed in by mistake) becomes an *APIError.
func (*Protocol) ParseResponse(body []byte) (*providers.Turn, error) {
	if !gjson.ValidBytes(body) {
		return nil, providers.Malformed("responses: body is not valid JSON")
	}
	resp := gjson.ParseBytes(body)
	if !resp.IsObject() {
		return nil, providers.Malformed("responses: body is not a JSON object")
	}
	if resp.Get("status").String() == "failed" {
		return nil, failure(resp)
	}
	if errv := resp.Get("error"); errv.IsObject() || errv.Type == gjson.String {
		return nil, providers.DecodeError(0, body)
	}
	output := resp.Get("output")
	if !output.IsArray() {
		return nil, providers.Malformed("responses: response has no output array")
	}
	t, err := turnFromItems(output.Array())
	if err != nil {
		return nil, err
	}
	t.Usage = usage(resp.Get("usage"))
	t.StopReason = stopReason(resp)
	return t, nil
}
