// Package openai speaks the OpenAI Chat Completions protocol
// (POST {base}/chat/completions). OpenRouter, OpenAI, DeepSeek, Moonshot and
// LM Studio are configurations of this one protocol: their dialects differ
// only in fields this package passes through untouched.
//
// What it keeps between turns. The assistant reply is echoed as one history
// message built from the reply's own bytes: tool_calls entries verbatim
// (apart from a generated id where the server sent none, a "{}" where it
// sent no arguments, and the chunk-only "index" key), and every provider
// field kept raw: reasoning_content (DeepSeek, Moonshot, llama.cpp),
// reasoning and reasoning_details (OpenRouter; the latter carries Gemini
// thought signatures and Anthropic thinking signatures), thought_signature
// and extra_content (Gemini's OpenAI-compatible endpoint). Null fields and
// the response-only annotations and audio are dropped, so content:null
// disappears as in every recorded follow-up request.
//
// Tool errors. Chat Completions has no is_error flag on tool messages, so an
// error result is sent as content prefixed with "Error: " (unless it already
// starts with "error"), which is the only way the model can tell a failed
// call from a successful one.
//
// Streams. Chunks are accumulated as WIRE-FORMATS.md §2 and §11 describe;
// a chunk with an "error" object (top-level, or on the choice as OpenRouter
// documents) ends the stream with an *APIError, as it does in a whole 200
// body. A stream that stops without "data: [DONE]" is accepted when a
// finish_reason was seen (the reply is complete; only a trailing usage
// chunk may be missing) and is otherwise an ErrStreamCut.
package openai
