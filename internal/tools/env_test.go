package tools

import (
	"slices"
	"testing"
)

func TestChildEnv(t *testing.T) {
	in := []string{
		"PATH=/usr/bin:/bin",
		"OPENROUTER_API_KEY=fake-or",
		"OPENAI_API_KEY=fake-oa",
		"ANTHROPIC_API_KEY=fake-ant",
		"GEMINI_API_KEY=g",
		"GOOGLE_API_KEY=g2",
		"DEEPSEEK_API_KEY=d",
		"MOONSHOT_API_KEY=m",
		"OLLAMA_API_KEY=o",
		"HOME=/home/u",
		"SOME_VENDOR_API_KEY=x",   // suffix _API_KEY
		"GITHUB_TOKEN=ghp",        // suffix _TOKEN
		"github_token=lower",      // names compared in upper case
		"AWS_SECRET_ACCESS_KEY=a", // contains SECRET
		"CLIENT_SECRET=c",
		"MYSECRETS=c",
		"OLLAMA_HOST=http://localhost:11434", // provider settings that are not secrets stay
		"TOKENIZER_PARALLELISM=false",        // TOKEN not as a suffix: kept
		"API_KEY_FILE=/k",                    // API_KEY not as a suffix: kept
		"EMPTY=",
		"NOEQUALS",
		"LANG=C.UTF-8",
	}
	want := []string{
		"PATH=/usr/bin:/bin",
		"HOME=/home/u",
		"OLLAMA_HOST=http://localhost:11434",
		"TOKENIZER_PARALLELISM=false",
		"API_KEY_FILE=/k",
		"EMPTY=",
		"NOEQUALS",
		"LANG=C.UTF-8",
	}
	got := ChildEnv(in)
	if !slices.Equal(got, want) {
		t.Errorf("ChildEnv =\n%q\nwant\n%q", got, want)
	}
	if len(ChildEnv(nil)) != 0 {
		t.Error("ChildEnv(nil) is not empty")
	}
}
