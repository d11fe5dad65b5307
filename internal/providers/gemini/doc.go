// Package gemini speaks Google's Gemini generateContent API (POST
// {base}/models/{model}:generateContent, base like
// https://generativelanguage.googleapis.com/v1beta) as pure translations over
// bytes. Streams use :streamGenerateContent?alt=sse.
//
// Choices worth knowing when reading the rest of the package:
//
//   - The key goes in the x-goog-api-key header, never in the URL, where it
//     would end up in logs and error messages.
//   - Tool parameter schemas are JSON Schema; Gemini's "parameters" field
//     takes an OpenAPI 3.0 subset and rejects unknown keywords with 400.
//     cleanSchema keeps the subset ($ref and allOf inlined, null types
//     turned into nullable, unsupported keywords and formats dropped).
//   - The model's content goes back exactly as received: Turn.Messages is
//     the response's own candidates[0].content bytes (non-stream), or the
//     parts of every chunk in order (stream), with plain text merged and
//     every part that carries a thoughtSignature kept whole, byte for byte,
//     where it came (the first of parallel calls, an empty text part).
//   - Gemini 2.5 sends functionCall parts without an id. ask then makes one
//     (prefix "gemini_", stable for the same reply) for its own records, but
//     never writes it into the echoed content nor sends it back: the
//     functionResponse of such a call carries only the name, and Gemini
//     pairs responses with calls by order, as its own SDKs do. Ids the model
//     did send are echoed and answered as they are. The name comes from
//     ToolResult.Name, which the loop fills from the call, so
//     FormatToolResults needs no state kept between steps.
//   - All results of one step go back as ONE user content of
//     functionResponse parts; response is {"output": ...} or, for a failed
//     call, {"error": ...}. Output that is itself a JSON object or array is
//     embedded as JSON rather than as a string.
//   - Whether the model called a tool is read from the parts, never from
//     finishReason, which says STOP either way.
//   - A structured-output Schema becomes responseMimeType
//     "application/json" plus responseSchema, except when tools are
//     declared: Gemini 2.x answers that pair with 400 ("Function calling
//     with a response mime type: 'application/json' is unsupported"), so the
//     schema then goes into the system instruction and the loop checks the
//     answer.
package gemini
