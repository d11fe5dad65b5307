package table

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/stage"
	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/tools"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// Providers shows the providers to a person.
func Providers(w io.Writer, rows []stage.ProviderInfo) error {
	var lines [][]string
	for _, r := range rows {
		key := "none needed"
		if len(r.KeyEnv) > 0 {
			state := "unset"
			if r.KeySet {
				state = "set"
			}
			if !r.KeyRequired {
				state = "optional, " + state
			}
			key = strings.Join(r.KeyEnv, " or ") + " (" + state + ")"
		}
		tools := "text protocol"
		if r.NativeTools {
			tools = "native"
		}
		lines = append(lines, []string{r.Name, r.Protocol, OrDash(r.BaseURL), key, tools, YesNo(r.Streaming), OrDash(r.Model)})
	}
	return Print(w, []string{"NAME", "PROTOCOL", "BASE URL", "KEY", "TOOLS", "STREAMING", "DEFAULT MODEL"}, lines...)
}

// Models shows the models to a person, with the columns the
// provider filled for at least one of them.
func Models(w io.Writer, models []providers.Model) error {
	columns := []struct {
		head string
		cell func(m providers.Model) string
	}{
		{"ID", func(m providers.Model) string { return m.ID }},
		{"NAME", func(m providers.Model) string {
			if m.Name == m.ID {
				return ""
			}
			return m.Name
		}},
		{"CONTEXT", func(m providers.Model) string { return count(m.ContextLength) }},
		{"MAX OUTPUT", func(m providers.Model) string { return count(m.MaxOutputTokens) }},
		{"TOOLS", func(m providers.Model) string {
			if m.Tools == nil {
				return ""
			}
			return YesNo(*m.Tools)
		}},
		{"$/M IN", func(m providers.Model) string { return m.InputPrice }},
		{"$/M OUT", func(m providers.Model) string { return m.OutputPrice }},
		{"SIZE", func(m providers.Model) string {
			if m.Size <= 0 {
				return ""
			}
			return strconv.FormatFloat(float64(m.Size)/(1<<30), 'f', 1, 64) + " GiB"
		}},
		{"CREATED", func(m providers.Model) string { return m.Created }},
		{"OWNED BY", func(m providers.Model) string { return m.OwnedBy }},
	}
	var header []string
	var cells []func(providers.Model) string
	for _, col := range columns {
		for _, m := range models {
			if col.cell(m) != "" {
				header, cells = append(header, col.head), append(cells, col.cell)
				break
			}
		}
	}
	if len(header) == 0 {
		header, cells = []string{"ID"}, []func(providers.Model) string{columns[0].cell}
	}
	rows := make([][]string, len(models))
	for i, m := range models {
		for _, cell := range cells {
			rows[i] = append(rows[i], OrDash(cell(m)))
		}
	}
	return Print(w, header, rows...)
}

// count is a token count for a table, "" for none.
func count(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// Tools shows the tools a run of the mode declares to a person.
func Tools(w io.Writer, mode string, declared []tools.Info) error {
	if len(declared) == 0 {
		fmt.Fprintf(w, "no tools are offered (mode %s)\n", mode)
		return nil
	}
	var rows [][]string
	for _, info := range declared {
		approval := "-"
		if info.RequiresApproval {
			approval = "asks"
		}
		desc, _, _ := strings.Cut(info.Description, "\n")
		rows = append(rows, []string{info.Name, OrDash(string(info.Risk)), approval, termtext.Shorten(desc, 80)})
	}
	return Print(w, []string{"NAME", "RISK", "APPROVAL", "DESCRIPTION"}, rows...)
}

// MCP shows the servers to a person: one line each, and its tools
// indented below it.
func MCP(w io.Writer, entries []mcp.Listing) error {
	if len(entries) == 0 {
		fmt.Fprintln(w, "no MCP servers: add them to the config file's mcpServers, or give --mcp")
		return nil
	}
	for _, e := range entries {
		what := e.URL
		if what == "" {
			what = strings.Join(e.Command, " ")
		}
		var notes []string
		if e.Disabled {
			notes = append(notes, "disabled")
		}
		if e.Sandbox {
			notes = append(notes, "sandboxed")
		}
		if len(e.Env) > 0 {
			notes = append(notes, "env "+strings.Join(e.Env, ","))
		}
		if len(e.Headers) > 0 {
			notes = append(notes, "headers "+strings.Join(e.Headers, ","))
		}
		if e.SignIn == "login needed" {
			target := e.Name
			if !strings.HasPrefix(e.Source, "config") {
				target = e.URL
			}
			notes = append(notes, "login needed: ask mcp login "+target)
		} else if e.SignIn != "" {
			notes = append(notes, e.SignIn)
		}
		notes = append(notes, e.Source)
		fmt.Fprintf(w, "%s\t%s\t%s\t(%s)\n", termtext.Safe(e.Name), e.Transport, termtext.Safe(termtext.Shorten(what, 80)), termtext.Safe(strings.Join(notes, "; ")))
		for _, t := range e.Tools {
			desc, _, _ := strings.Cut(t.Description, "\n")
			// A server's words: shown, never obeyed by the terminal.
			fmt.Fprintf(w, "  %s\t%s\n", termtext.Safe(t.Declared), termtext.Safe(termtext.Shorten(desc, 80)))
		}
		if e.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", termtext.Safe(termtext.FirstLine(e.Error)))
		}
	}
	return nil
}

// Runs shows the kept runs, newest first, with a working directory under
// home written as ~/….
func Runs(w io.Writer, runs []history.Entry, home string) error {
	var rows [][]string
	for _, r := range runs {
		id := r.ID
		if r.Depth > 0 {
			id = strings.Repeat("  ", r.Depth-1) + "└ " + id // a subagent's run, under its parent
		}
		rows = append(rows, []string{id, r.Time.Local().Format("2006-01-02 15:04"), r.Status,
			termtext.Safe(tildePath(r.Workdir, home)), termtext.Safe(termtext.Shorten(r.Prompt, 60))})
	}
	return Print(w, []string{"ID", "TIME", "STATUS", "WORKDIR", "PROMPT"}, rows...)
}

// tildePath writes a path under home as ~/…, for a narrow column.
func tildePath(p, home string) string {
	if home != "" && home != "/" {
		if rest, ok := strings.CutPrefix(p, strings.TrimRight(home, "/")+"/"); ok {
			return "~/" + rest
		}
	}
	return p
}

// Sandbox shows what each layer of the sandbox does here, or why not.
func Sandbox(w io.Writer, r sandbox.Report) error {
	rows := make([][]string, 0, len(r.Layers))
	for _, l := range r.Layers {
		how := l.How
		if !l.OK {
			how = l.Problem
		}
		rows = append(rows, []string{l.Layer, YesNo(l.OK), how})
	}
	return Print(w, []string{"LAYER", "HERE", "HOW, OR WHY NOT"}, rows...)
}

// Settings prints `ask config`'s settings, each with where it came from,
// under the config file they were read from (file).
func Settings(w io.Writer, file string, entries []settings.Entry) error {
	fmt.Fprintf(w, "config file: %s\n\n", file)
	var rows [][]string
	for _, e := range entries {
		rows = append(rows, []string{e.Name, e.Shown(), e.Source})
	}
	return Print(w, []string{"SETTING", "VALUE", "SOURCE"}, rows...)
}
