package run

import (
	"encoding/json"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

// Summary is what a run came to as --json prints it (DESIGN §6); lists are
// empty rather than null, for jq.
type Summary struct {
	// ID is the run's: ask log show ID, ask replay ID, ask --resume ID.
	ID     string `json:"id"`
	Status string `json:"status"`
	Answer string `json:"answer"`
	// Value is the answer parsed, for a run with --schema whose answer
	// validated, so that scripts need no fromjson.
	Value     json.RawMessage `json:"value,omitempty"`
	Provider  string          `json:"provider"`
	Model     string          `json:"model"`
	Steps     int             `json:"steps"`
	ToolCalls []loop.Call     `json:"tool_calls"`
	Usage     providers.Usage `json:"usage"`
	// UsagePerStep is each model request's usage, in step order.
	UsagePerStep []records.StepUsage `json:"usage_per_step"`
	Denials      []records.Denial    `json:"denials"`
	// Deferred are the calls a deferred run waits on (ask resume).
	Deferred []records.Deferred `json:"deferred"`
	// Changes are the files the run changed, in order.
	Changes []records.Change `json:"changes"`
	// Compactions are what each compaction of the conversation did.
	Compactions []records.Compaction `json:"compactions"`
	// Worktree is the --worktree the run changed and kept.
	Worktree *records.Worktree `json:"worktree,omitempty"`
	// SkillsUsed are the skills activated (DESIGN §9).
	SkillsUsed []string `json:"skills_used"`
	// Children are the runs the agent tool started; Usage and Cost
	// include theirs. ParentID is the run that started this one.
	Children   []records.Child `json:"children"`
	ParentID   string          `json:"parent_id,omitempty"`
	Error      string          `json:"error,omitempty"`
	ExitCode   int             `json:"exit_code"`
	DurationMS int64           `json:"duration_ms"`
	// Cost is the run's cost: as the provider reported it, else its
	// tokens at the config file's prices and the run's price rate.
	Cost *float64 `json:"cost,omitempty"`
	// Tier and PriceRate say how the requests were billed when not at
	// the listed price (see records.Event).
	Tier      string   `json:"tier,omitempty"`
	PriceRate *float64 `json:"price_rate,omitempty"`
}

// Summary is res, a result of r, as --json prints it.
func (r *Run) Summary(res *Result) Summary {
	s := Summary{ID: res.ID, Status: res.Status, Answer: res.Answer, Provider: r.Provider.Name, Model: r.ModelName,
		Steps: res.Steps, ToolCalls: nonNil(res.Calls), Usage: res.Usage, UsagePerStep: nonNil(res.UsagePerStep),
		Denials: nonNil(res.Denials), Deferred: nonNil(res.Deferred), Changes: nonNil(res.Changes), Compactions: nonNil(res.Compactions), ExitCode: res.ExitCode,
		DurationMS: res.Duration.Milliseconds(), Cost: res.Usage.Cost, Worktree: res.Worktree,
		SkillsUsed: nonNil(res.SkillsUsed), Children: nonNil(res.Children), ParentID: res.ParentID}
	if r.HasSchema() && res.Status == loop.StatusCompleted && json.Valid([]byte(res.Answer)) {
		s.Value = json.RawMessage(res.Answer)
	}
	s.Tier, s.PriceRate = r.billing()
	if res.Err != nil {
		s.Error = res.Err.Error()
	}
	return s
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
