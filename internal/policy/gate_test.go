package policy_test

import (
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
)

// The loop's gate is a policy; the check lives in an external test because
// the loop imports policy.
var _ loop.Gate = (*policy.Policy)(nil)
