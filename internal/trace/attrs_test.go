package trace

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/ask-cli/ask/internal/providers/catalog"
)

// The names ask writes are the conventions' own, checked against the Go
// package generated from semantic conventions v1.40.0.
func TestNamesAreTheConventions(t *testing.T) {
	t.Parallel()
	for ours, theirs := range map[string]attribute.Key{
		keyOperationName: semconv.GenAIOperationNameKey, keyAgentName: semconv.GenAIAgentNameKey,
		keyConversationID: semconv.GenAIConversationIDKey, keyProviderName: semconv.GenAIProviderNameKey,
		keyRequestModel: semconv.GenAIRequestModelKey, keyRequestMaxTokens: semconv.GenAIRequestMaxTokensKey,
		keyRequestTemperature: semconv.GenAIRequestTemperatureKey, keyResponseModel: semconv.GenAIResponseModelKey,
		keyResponseID: semconv.GenAIResponseIDKey, keyResponseFinish: semconv.GenAIResponseFinishReasonsKey,
		keyInputTokens: semconv.GenAIUsageInputTokensKey, keyOutputTokens: semconv.GenAIUsageOutputTokensKey,
		keyCacheReadTokens: semconv.GenAIUsageCacheReadInputTokensKey, keyCacheCreationTokens: semconv.GenAIUsageCacheCreationInputTokensKey,
		keyToolName: semconv.GenAIToolNameKey, keyToolCallID: semconv.GenAIToolCallIDKey, keyToolType: semconv.GenAIToolTypeKey,
		keyToolCallArguments: semconv.GenAIToolCallArgumentsKey, keyToolCallResult: semconv.GenAIToolCallResultKey,
		keyInputMessages: semconv.GenAIInputMessagesKey, keyOutputMessages: semconv.GenAIOutputMessagesKey,
		keySystemInstructions: semconv.GenAISystemInstructionsKey, keyErrorType: semconv.ErrorTypeKey,
		keyServerAddress: semconv.ServerAddressKey, keyServerPort: semconv.ServerPortKey, keyHTTPStatus: semconv.HTTPResponseStatusCodeKey,
	} {
		if ours != string(theirs) {
			t.Errorf("ask writes %s where the conventions say %s", ours, theirs)
		}
	}
	for ours, theirs := range map[string]attribute.KeyValue{
		opInvokeAgent: semconv.GenAIOperationNameInvokeAgent, opChat: semconv.GenAIOperationNameChat, opExecuteTool: semconv.GenAIOperationNameExecuteTool,
		traced("openai-responses"): semconv.GenAIProviderNameOpenAI, traced("gemini"): semconv.GenAIProviderNameGCPGemini,
		traced("anthropic"): semconv.GenAIProviderNameAnthropic, traced("deepseek"): semconv.GenAIProviderNameDeepseek,
	} {
		if ours != theirs.Value.AsString() {
			t.Errorf("ask writes %s where the conventions say %s", ours, theirs.Value.AsString())
		}
	}
	if schemaURL != semconv.SchemaURL {
		t.Errorf("schema %s, want %s", schemaURL, semconv.SchemaURL)
	}
}

// traced is the provider's gen_ai.provider.name, from its catalog row.
func traced(name string) string {
	p, err := catalog.Lookup(name)
	if err != nil {
		panic(err)
	}
	return p.TracedName()
}
