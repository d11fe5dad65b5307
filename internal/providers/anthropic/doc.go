// Package anthropic speaks Anthropic's Messages API (POST {base}/messages,
// base like https://api.anthropic.com/v1) as pure translations over bytes.
//
// Choices worth knowing when reading the rest of the package:
//
//   - max_tokens is required by the API. Request.MaxTokens wins; otherwise
//     DefaultMaxTokens (8192) is sent, which every current Claude model
//     accepts. Claude 3 (not 3.5+) models cap output at 4096 and reject it:
//     set MaxTokens for them.
//   - A structured-output Schema goes out as output_config.format (a
//     json_schema) for models that have structured output, adapted to what
//     its decoder enforces (schema.go); for older models, and schemas with
//     open objects, an instruction asking for JSON matching the schema is
//     appended to the system prompt instead. The answer is validated
//     against the whole schema by the loop either way.
//   - The assistant reply goes back exactly as received: Turn.Messages is one
//     {"role":"assistant","content":[...]} message whose content blocks are
//     the response's own bytes (non-stream) or are rebuilt from
//     content_block_start plus deltas in index order (stream). Thinking and
//     redacted_thinking blocks and their signatures, and server-added fields
//     such as tool_use "caller", are kept; a reply with no content blocks
//     gives no message, because the API rejects an empty assistant turn.
//   - All results of one step go back as ONE user message of tool_result
//     blocks, which is what parallel calls require. If the loop then adds a
//     plain user message, the API receives two user turns in a row; it
//     merges consecutive same-role turns, and the tool_result blocks stay
//     first, as it requires.
//   - Whether the model called a tool is decided by tool_use blocks, never by
//     stop_reason.
package anthropic
