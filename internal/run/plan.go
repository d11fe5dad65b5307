package run

import (
	"os"
	"strings"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/ask-cli/ask/internal/policy"
)

// PlanPrompt makes a plan saved from `--mode plan` the goal of an agent
// run (`ask --plan FILE [extra instructions]`): the plan, to be carried
// out step by step, then any extra instructions.
func PlanPrompt(file, mode, wd, extra string) (string, error) {
	if mode != policy.ModeAgent {
		return "", fault.Usagef("--plan carries a plan out, which needs --mode agent (not %s)", mode)
	}
	plan, err := os.ReadFile(AbsPath(wd, file))
	if err != nil {
		return "", fault.Usagef("--plan: %v", err)
	}
	if strings.TrimSpace(string(plan)) == "" {
		return "", fault.Usagef("--plan: %s is empty", file)
	}
	prompt := "Carry out this plan, step by step, and report what you did:\n\n" + strings.TrimSpace(string(plan))
	if extra != "" {
		prompt += "\n\n" + extra
	}
	return prompt, nil
}
