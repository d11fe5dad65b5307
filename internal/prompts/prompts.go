// Package prompts renders the default system prompt that ask sends before
// anything the user adds with --system.
package prompts

import (
	"strings"
	"time"
)

// Env is what the default system prompt tells the model about its setting.
// ask's version is not among it: it means nothing to the model, and a
// prompt that changed with every release would change every recorded run.
type Env struct {
	Date    time.Time
	OS      string // runtime.GOOS
	Workdir string
	Mode    string // ask, plan or agent
	// Tools are true when the model is offered tools at all.
	Tools bool
	// Project is the project's instructions (AGENTS.md), nil for none.
	Project *Project
}

// modeGuidance says what each mode allows, in the model's terms.
var modeGuidance = map[string]string{
	"ask":   "Mode: ask. Answer the question; you may only read and search files, in at most a few steps.",
	"plan":  "Mode: plan. Investigate with read-only tools, change nothing, and answer with a numbered plan of concrete steps.",
	"agent": "Mode: agent. You may read, edit and write files and run commands to complete the task.",
}

const toolGuidance = `Use the tools to ground your answer in the actual files; do not guess at their contents. ` +
	`Independent tool calls may be made together in one step. ` +
	`Paths are relative to the working directory.`

// modeToolGuidance ends the tool guidance for each mode: only agent mode
// edits, and each mode's final reply is its own.
var modeToolGuidance = map[string]string{
	"ask":  "When you are done, reply without tool calls: answer briefly from what you found.",
	"plan": "When you are done, reply without tool calls with the plan, naming the files each step would touch.",
	"agent": "Read a file before editing it, and make the smallest edit that does the job. " +
		"When you are done, reply without tool calls: say briefly what you found or changed.",
}

// System renders the default system prompt, then appends extra (the user's
// --system text) when it is not empty. It stays small on purpose: it is
// sent with every request.
func System(env Env, extra string) string {
	var b strings.Builder
	b.WriteString("You are ask, a command-line assistant working in a user's shell.\n")
	b.WriteString("Date: ")
	b.WriteString(env.Date.Format("2006-01-02"))
	b.WriteString(". OS: ")
	b.WriteString(env.OS)
	b.WriteString(". Working directory: ")
	b.WriteString(env.Workdir)
	b.WriteString(".\n")
	if g, ok := modeGuidance[env.Mode]; ok {
		b.WriteString(g)
		b.WriteString("\n")
	}
	if env.Tools {
		b.WriteString(toolGuidance)
		if g, ok := modeToolGuidance[env.Mode]; ok {
			b.WriteString(" " + g)
		}
		b.WriteString("\n")
	}
	b.WriteString("Your reply is printed in a terminal or read by a script: be direct, use plain text, and keep it short unless asked for detail.")
	if env.Project != nil && strings.TrimSpace(env.Project.Text) != "" {
		b.WriteString(projectSection(env.Project))
	}
	if extra = strings.TrimSpace(extra); extra != "" {
		b.WriteString("\n\n")
		b.WriteString(extra)
	}
	return b.String()
}
