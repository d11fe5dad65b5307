package policy

import (
	"fmt"
	"strings"

	"github.com/ask-cli/ask/internal/providers"
)

// foreignTools names ask's tool for each of Claude Code's, which skills and
// agent definitions are written in.
var foreignTools = map[string]string{
	"Read": "read_file", "Write": "write_file", "Edit": "edit_file", "MultiEdit": "edit_file",
	"Bash": ShellTool, "Grep": "search", "Glob": "list_directory", "LS": "list_directory",
}

// ToolList reads a tool list as a skill's allowed-tools or an agent
// definition's tools and disallowedTools write it: ask's own rule syntax
// (shell:go test*), or Claude Code's names with an optional argument in
// parentheses (Bash(git diff:*), Read). Entries it cannot read are
// returned apart, for a warning; they match nothing.
func ToolList(entries []string) (patterns []Pattern, unread []string) {
	for _, e := range entries {
		e = strings.TrimSpace(e)
		name, arg, hasArg := e, "", false
		if open := strings.IndexByte(e, '('); open > 0 && strings.HasSuffix(e, ")") {
			name, arg, hasArg = e[:open], e[open+1:len(e)-1], true
		}
		if ours, ok := foreignTools[name]; ok {
			name = ours
		}
		if !hasArg {
			name, arg, hasArg = strings.Cut(name, ":")
		}
		// Claude Code's "git diff:*" is the prefix "git diff".
		if before, ok := strings.CutSuffix(arg, ":*"); ok {
			arg = before + "*"
		}
		raw := name
		if hasArg {
			raw += ":" + arg
		}
		p, err := ParsePattern(raw)
		if err != nil || strings.ContainsAny(name, "() ") {
			unread = append(unread, e)
			continue
		}
		patterns = append(patterns, p)
	}
	return patterns, unread
}

// Within reports whether patterns cover a call as allow rules would: its
// tool, and its main argument (for the shell tool, every command of a line
// that can be judged statically). It decides what a skill's allowed-tools
// and an agent definition's tools leave to the rules; it never allows.
func Within(patterns []Pattern, c providers.ToolCall) bool {
	subject := Summary(c.Arguments)
	var line *shellLine
	if c.Name == ShellTool {
		line = readLine(subject)
	}
	return allowed(patterns, c.Name, subject, line)
}

// Strings are the patterns as rule text, as the settings hold rules.
func Strings(patterns []Pattern) []string {
	out := make([]string, len(patterns))
	for i, p := range patterns {
		out[i] = p.String()
	}
	return out
}

// OutsideReason is a denial's reason for a call that a narrowing list
// (what) does not cover.
func OutsideReason(call, what string, patterns []Pattern) string {
	if len(patterns) == 0 {
		return fmt.Sprintf("%s is not allowed: %s allows no tool", call, what)
	}
	return fmt.Sprintf("%s is not allowed: %s allows only %s", call, what, strings.Join(Strings(patterns), ", "))
}
