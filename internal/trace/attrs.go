package trace

// The names of the OpenTelemetry semantic conventions for generative AI,
// as of semantic conventions v1.40.0 (docs/gen-ai: gen-ai-spans.md,
// gen-ai-agent-spans.md; status "Development"), the last release whose Go
// package (go.opentelemetry.io/otel/semconv/v1.40.0) carries them; later
// releases moved them to open-telemetry/semantic-conventions-genai
// unchanged. attrs_test.go checks every name against that package.
const (
	schemaURL = "https://opentelemetry.io/schemas/1.40.0"
	scopeName = "github.com/ask-cli/ask/internal/trace"

	keyOperationName       = "gen_ai.operation.name"
	keyAgentName           = "gen_ai.agent.name"
	keyConversationID      = "gen_ai.conversation.id"
	keyProviderName        = "gen_ai.provider.name"
	keyRequestModel        = "gen_ai.request.model"
	keyRequestMaxTokens    = "gen_ai.request.max_tokens"
	keyRequestTemperature  = "gen_ai.request.temperature"
	keyResponseModel       = "gen_ai.response.model"
	keyResponseID          = "gen_ai.response.id"
	keyResponseFinish      = "gen_ai.response.finish_reasons"
	keyInputTokens         = "gen_ai.usage.input_tokens"
	keyOutputTokens        = "gen_ai.usage.output_tokens"
	keyCacheReadTokens     = "gen_ai.usage.cache_read.input_tokens"
	keyCacheCreationTokens = "gen_ai.usage.cache_creation.input_tokens"
	keyToolName            = "gen_ai.tool.name"
	keyToolCallID          = "gen_ai.tool.call.id"
	keyToolType            = "gen_ai.tool.type"
	keyToolCallArguments   = "gen_ai.tool.call.arguments"
	keyToolCallResult      = "gen_ai.tool.call.result"
	keyInputMessages       = "gen_ai.input.messages"
	keyOutputMessages      = "gen_ai.output.messages"
	keySystemInstructions  = "gen_ai.system_instructions"
	keyErrorType           = "error.type"
	keyServerAddress       = "server.address"
	keyServerPort          = "server.port"
	keyHTTPStatus          = "http.response.status_code"

	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"

	// ask's own, for what the conventions have no name for.
	keyRunStatus    = "ask.run.status"
	keyRunExitCode  = "ask.run.exit_code"
	keyRunSteps     = "ask.run.steps"
	keyStep         = "ask.step"
	keyCost         = "ask.cost"
	keyDenyReason   = "ask.tool.deny_reason"
	keyHookEvent    = "ask.hook.event"
	keyHookCommand  = "ask.hook.command"
	keyHookDecision = "ask.hook.decision"
	keyHookReason   = "ask.hook.reason"
	keyCheckCommand = "ask.check.command"
	keyCheckRound   = "ask.check.round"
	keyCheckPassed  = "ask.check.passed"
	keyCheckExit    = "ask.check.exit_code"
	keyCheckOutput  = "ask.check.output"
	keyTaskID       = "ask.batch.task.id"
	keyTaskStatus   = "ask.batch.task.status"
)
