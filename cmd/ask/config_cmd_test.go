package main

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/runtest"
)

// TestKnobsInAskConfig: `ask config` shows where each knob came from, the
// flag over the config file. (That a run sends and records them is
// internal/run's TestKnobsFromConfigAndRecorded.)
func TestKnobsInAskConfig(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	runtest.WriteConfig(t, home, `{"temperature": 0.4, "reasoning": "low"}`)
	env := map[string]string{"HOME": home}

	cfg := askConfig(t, env, "--temperature", "0.6")
	if got := cfg.Settings["temperature"]; got.Value != 0.6 || got.Source != "flag --temperature" {
		t.Errorf("ask config temperature = %+v; want 0.6 from the flag", got)
	}
	if got := cfg.Settings["reasoning"]; got.Value != "low" || !strings.HasPrefix(got.Source, "config ") {
		t.Errorf("ask config reasoning = %+v; want low from the file", got)
	}
}
