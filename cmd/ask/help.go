package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/settings"
)

// urfaveFlagString is urfave/cli's own rendering of a flag in help.
var urfaveFlagString = cli.FlagStringer

func init() {
	cli.FlagStringer = flagString
}

// flagString renders a flag for help as urfave/cli does, without the
// defaults that say nothing or say it twice: "(default: false)" on a
// switch, and the generated default of a flag whose usage already says
// what its default is ("(default: the provider's own) (default: 0)").
func flagString(f cli.Flag) string {
	s := urfaveFlagString(f)
	df, ok := f.(cli.DocGenerationFlag)
	if !ok || df.GetDefaultText() == "" {
		return s
	}
	isBool := kindOf(f) == settings.Bool
	if (isBool && df.GetDefaultText() == "false") || strings.Contains(df.GetUsage(), "(default:") {
		s = strings.TrimSuffix(s, " (default: "+df.GetDefaultText()+")")
	}
	return s
}

// examples are shown at the end of each command's --help, by the
// command's full name.
var examples = map[string][]string{
	"ask": {
		`ask "why does make fail here?"`,
		`git diff | ask --mode ask "review this change"`,
		`ask --json "how many TODOs are there?" | jq -r .answer`,
	},
	"ask replay": {
		`ask replay                          # the built-in demo, offline`,
		`ask --transcript run.jsonl "fix the test" && ask replay run.jsonl`,
		`ask replay --check run.jsonl        # exit 1 if this build sends other requests`,
	},
	"ask config": {
		`ask config`,
		`ask -p anthropic --mode plan config --json | jq .settings.model`,
	},
	"ask completion": {
		`source <(ask completion bash)`,
		`ask completion fish > ~/.config/fish/completions/ask.fish`,
	},
	"ask provider list": {
		`ask provider list`,
		`ask provider list | jq -r '.[] | select(.key_set) | .name'`,
	},
	"ask provider format-tools": {
		`ask tools list | ask provider format-tools -p anthropic`,
		`ask provider format-tools -p gemini tools.json`,
	},
	"ask provider parse-tool-calls": {
		`ask provider send -p openai request.json | ask provider parse-tool-calls -p openai`,
		`ask provider parse-tool-calls -p anthropic --text reply.sse | jq -r .text`,
	},
	"ask provider format-tool-result": {
		`ask tools run calls.json | ask provider format-tool-result -p openai`,
		`ask provider format-tool-result -p gemini results.json`,
	},
	"ask provider request": {
		`ask provider request -p openai "what is in notes.txt?" > request.json`,
		`ask provider request -p anthropic --mode plan "plan a refactor" | jq .system`,
	},
	"ask provider send": {
		`ask provider send -p openai request.json > reply.sse`,
		`ask provider request -p ollama "hi" | ask provider send -p ollama`,
	},
	"ask provider append": {
		`ask provider append -p openai --reply reply.sse --results results.json request.json > next.json`,
		`ask tools run calls.json | ask provider append -p anthropic --reply reply.sse --results - request.json`,
	},
	"ask tools list": {
		`ask tools list --mode ask`,
		`ask tools list --mcp 'npx -y @modelcontextprotocol/server-everything' --json`,
	},
	"ask tools show": {
		`ask tools show read_file`,
		`ask tools show --tools-file tools.json deploy`,
	},
	"ask tools run": {
		`ask provider parse-tool-calls -p openai reply.sse | ask tools run`,
		`echo '[{"id":"c1","name":"read_file","arguments":"{\"path\":\"go.mod\"}"}]' | ask tools run --mode ask`,
	},
	"ask log list": {
		`ask log list`,
		`ask log list --json | jq -r '.[] | select(.status != "completed") | .id'`,
	},
	"ask log show": {
		`ask log show 20261123-2154`,
		`ask log show --json 20261123-2154 | jq -c 'select(.type == "tool.finished")'`,
	},
	"ask log search": {
		`ask log search "flaky test"`,
		`ask --resume "$(ask log search --json migration | jq -r '.[0].id')" "go on"`,
	},
	"ask models": {
		`ask models -p openrouter`,
		`ask models -p anthropic --json | jq -r '.[].id'`,
	},
	"ask mcp list": {
		`ask mcp list`,
		`ask mcp list --tools --mcp https://mcp.example.com/mcp --mcp-header 'Authorization: Bearer ${TOKEN}'`,
		`ask mcp list --tools --json | jq -r '.[].tools[]?.declared'`,
	},
	"ask batch": {
		`git ls-files '*.go' | jq -Rc '{id: ., prompt: ("review " + .), mode: "ask"}' | ask batch -j 8 --output reviews.jsonl`,
		`ask batch --shard "$JOB_COMPLETION_INDEX/4" --output "results-$JOB_COMPLETION_INDEX.jsonl" tasks.jsonl`,
		`ask batch --output results.jsonl tasks.jsonl || jq -c 'select(.exit_code != 0)' results.jsonl`,
	},
	"ask sandbox check": {
		`ask sandbox check`,
		`ask sandbox check --json | jq .network`,
	},
}

// addCommandExamples appends the examples of c, a command under parent
// ("ask", "ask provider"), and of every command under it.
func addCommandExamples(c *cli.Command, parent string) {
	full := parent + " " + c.Name
	c.Description = withExamples(c.Description, examples[full])
	for _, sub := range c.Subcommands {
		addCommandExamples(sub, full)
	}
}

func withExamples(description string, lines []string) string {
	if len(lines) == 0 {
		return description
	}
	var b strings.Builder
	if description != "" {
		b.WriteString(strings.TrimRight(description, "\n") + "\n\n")
	}
	b.WriteString("Examples:")
	for _, l := range lines {
		b.WriteString("\n   " + l)
	}
	return b.String()
}
