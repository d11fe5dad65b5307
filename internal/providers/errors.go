package providers

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// APIError is an error reported by a provider, either as an HTTP status or as
// an error object inside a successful stream.
type APIError struct {
	Provider   string // the configured provider name, filled in by the caller
	StatusCode int    // 0 when the error came inside a 200 stream
	Type       string // "invalid_request_error", "NOT_FOUND", ...
	Code       string
	Reason     string // Gemini's google.rpc.ErrorInfo reason, such as API_KEY_INVALID
	Message    string
	// URL is the endpoint that answered, credentials removed; "" when the
	// error came from a body a stage was given.
	URL string
}

func (e *APIError) Error() string {
	var b strings.Builder
	if e.Provider != "" {
		b.WriteString(e.Provider)
		b.WriteString(": ")
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "HTTP %d", e.StatusCode)
		if e.URL != "" {
			fmt.Fprintf(&b, " from %s", e.URL)
		}
	} else {
		b.WriteString("error in stream")
	}
	if e.Type != "" {
		fmt.Fprintf(&b, " (%s)", e.Type)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// IsAuth reports whether the provider rejected the credentials. It reads
// the body as well as the status, so that a recorded body handed to a stage
// (which has no status) and the same body met by a run are classified
// alike, and so that a provider answering a bad key with another status
// (Gemini: 400 INVALID_ARGUMENT, reason API_KEY_INVALID) is still caught.
func (e *APIError) IsAuth() bool {
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return true
	}
	switch strings.ToLower(e.Type) {
	case "authentication_error", // Anthropic, DeepSeek
		"invalid_authentication_error",         // Moonshot
		"permission_error",                     // Anthropic
		"unauthenticated", "permission_denied": // Gemini's status
		return true
	}
	switch {
	case e.Code == "invalid_api_key", // OpenAI
		e.Code == "401",                         // OpenRouter's numeric code, which is its HTTP status
		strings.HasPrefix(e.Reason, "API_KEY_"): // Gemini: API_KEY_INVALID, API_KEY_EXPIRED, …
		return true
	}
	// Ollama's cloud says only {"error":"unauthorized"}.
	return e.Type == "" && e.Code == "" && strings.EqualFold(e.Message, "unauthorized")
}

// Retryable reports whether the same request may succeed later: 408, 409,
// 429, 5xx and Anthropic's 529, except a spend limit, which will not lift.
func (e *APIError) Retryable() bool {
	if strings.Contains(e.Code, "spend_limit") {
		return false
	}
	switch c := e.StatusCode; {
	case c == 408, c == 409, c == 429, c >= 500:
		return true
	}
	return false
}

// ContextTooLong reports whether the provider refused the request for
// holding more tokens than the model's window, in each protocol's form:
// OpenAI's and the Responses API's code context_length_exceeded (also
// OpenRouter's and DeepSeek's message), Anthropic's "prompt is too long",
// Gemini's 400 "input token count ... exceeds the maximum", llama.cpp's
// exceed_context_size_error, and Ollama's message about the context length.
func (e *APIError) ContextTooLong() bool {
	if e.Code == "context_length_exceeded" || e.Type == "exceed_context_size_error" {
		return true
	}
	if e.StatusCode != 0 && e.StatusCode != 400 && e.StatusCode != 413 && e.StatusCode != 500 {
		return false
	}
	m := strings.ToLower(e.Message)
	for _, s := range contextTooLong {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

var contextTooLong = []string{
	"prompt is too long",                   // Anthropic
	"maximum context length",               // OpenAI, OpenRouter, DeepSeek, vLLM
	"context_length_exceeded",              // in a message
	"exceeds the maximum number of tokens", // Gemini
	"exceeds the context length",           // Ollama
	"exceeds the available context size",   // llama.cpp
	"input length exceeds",                 // Ollama's older form
	"context window",                       // Moonshot ("exceeded model context window"), others
}

// windowIn finds the window a "context too long" message names, in each
// provider's words. They are compiled when first needed, not by every
// run's package init.
var windowIn = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`maximum context length is (\d+)`),            // OpenAI, OpenRouter, DeepSeek
		regexp.MustCompile(`tokens > (\d+) maximum`),                     // Anthropic
		regexp.MustCompile(`maximum number of tokens allowed \((\d+)\)`), // Gemini
		regexp.MustCompile(`available context size \((\d+) tokens\)`),    // Ollama, llama.cpp
		regexp.MustCompile(`"n_ctx":(\d+)`),                              // llama.cpp's body, inside Ollama's
	}
})

// ContextWindow is the window in tokens a "context too long" error names,
// 0 when it names none.
func (e *APIError) ContextWindow() int {
	if !e.ContextTooLong() {
		return 0
	}
	for _, re := range windowIn() {
		if m := re.FindStringSubmatch(e.Message); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// IsContextTooLong reports whether err is a provider's "context too long"
// answer.
func IsContextTooLong(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.ContextTooLong()
}

// ErrMalformed marks a response that could not be read as the protocol says.
var ErrMalformed = errors.New("malformed response")

// Malformed wraps a description of an unreadable response in ErrMalformed.
func Malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// ErrStreamCut marks a stream that ended before its terminal event.
var ErrStreamCut = errors.New("stream ended early")

// DecodeError reads an error body in any of the shapes providers use:
//
//	{"error":{"message","type","code"}}           OpenAI, DeepSeek, Moonshot
//	{"error":{"code":429,"message","metadata"}}    OpenRouter
//	{"type":"error","error":{"type","message"}}   Anthropic
//	{"error":{"code":404,"message","status"}}      Gemini
//	{"error":"message"}                            Ollama
//
// Anything else (an HTML page from a proxy, say) is summarised from its text.
func DecodeError(status int, body []byte) *APIError {
	e := &APIError{StatusCode: status}
	if gjson.ValidBytes(body) {
		errv := gjson.GetBytes(body, "error")
		switch {
		case errv.Type == gjson.String:
			e.Message = errv.String()
		case errv.IsObject():
			e.Message = errv.Get("message").String()
			e.Type = firstNonEmpty(errv.Get("type").String(), errv.Get("status").String())
			e.Code = errv.Get("code").String()
			if c := errv.Get("details.error_code").String(); c != "" {
				e.Code = c
			}
			// Gemini's details is a list of typed objects; the ErrorInfo
			// among them names the reason.
			errv.Get("details").ForEach(func(_, d gjson.Result) bool {
				if r := d.Get("reason"); r.Type == gjson.String {
					e.Reason = r.String()
					return false
				}
				return true
			})
			if raw := errv.Get("metadata.raw").String(); raw != "" && len(raw) < 300 {
				e.Message += " (" + raw + ")"
			}
		default:
			e.Message = gjson.GetBytes(body, "message").String()
		}
		if e.Message != "" {
			return e
		}
	}
	e.Message = summarize(body)
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// StreamError returns the error an in-stream event reports, or nil. It
// recognises a top-level "error" object or string (OpenAI dialects,
// OpenRouter, Ollama) and Anthropic's and Responses' typed error events.
func StreamError(data []byte) *APIError {
	errv := gjson.GetBytes(data, "error")
	typ := gjson.GetBytes(data, "type").String()
	if (!errv.Exists() || errv.Type == gjson.Null) && typ != "error" {
		return nil
	}
	e := DecodeError(0, data)
	if typ == "error" && !errv.Exists() {
		e.Message = gjson.GetBytes(data, "message").String()
		e.Code = gjson.GetBytes(data, "code").String()
	}
	return e
}

// summarize turns an unexpected body (often HTML) into one short line.
func summarize(body []byte) string {
	s := string(body)
	if i := strings.Index(strings.ToLower(s), "<title>"); i >= 0 {
		rest := s[i+len("<title>"):]
		if j := strings.Index(strings.ToLower(rest), "</title>"); j >= 0 {
			return "HTML page: " + strings.TrimSpace(rest[:j])
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
