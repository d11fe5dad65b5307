package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/tools"
)

// Conversations: every run of the main command also writes its transcript
// to $XDG_STATE_HOME/ask/last.jsonl (default ~/.local/state/ask/), and
// `ask -c` carries on from it, `ask --resume FILE` from any transcript. The
// conversation itself comes from the transcript's run.finished event, whose
// history is the loop's own (every message in the protocol's form, each
// tool call answered); the new run records it again in its run.started
// settings, so that `ask replay` sends the same requests.

// lastTranscriptName is the file under $XDG_STATE_HOME/ask that holds the
// last run's transcript.
const lastTranscriptName = "last.jsonl"

// conversation is an earlier run to carry on from.
type conversation struct {
	source   string // the flag and file, for messages
	provider string
	tools    []string
	history  []json.RawMessage
	// keepTools: no flag chose the tools, so the run offers the same ones.
	keepTools bool
}

// readConversation reads the transcript named by --continue or --resume
// and makes the earlier run's settings the defaults of this one, so that it
// carries on with the same provider, mode and tools: provider, model, base
// URL, mode, --safe, --tool-protocol, --tools-file and --mcp. Flags the
// user gave still win, each over its own setting. It returns nil when
// neither flag is set. It must run before buildSession reads the flags.
//
// The carried settings are set as if typed, so they also beat the
// environment and the config file: the conversation was held with them,
// and a changed ASK_BASE_URL or config must not send it elsewhere
// half-way.
func readConversation(c *cli.Context, stdio *IO) (*conversation, error) {
	resume := c.String("resume")
	if !c.Bool("continue") && resume == "" {
		return nil, nil
	}
	if c.Bool("continue") && resume != "" {
		return nil, usageErr("--continue and --resume both name the conversation to carry on: choose one")
	}
	path, flag := absPath(stdio.Wd, resume), "--resume "+resume
	if resume == "" {
		flag = "--continue"
		if path = lastTranscriptPath(stdio.Getenv); path == "" {
			return nil, usageErr("--continue: cannot tell where the last run was kept: set XDG_STATE_HOME or HOME")
		}
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && resume == "":
		return nil, usageErr("--continue: there is no earlier run to continue (%s does not exist)", path)
	case err != nil:
		return nil, usageErr("%s: %v", flag, err)
	}
	conv, err := parseConversation(data)
	if err != nil {
		return nil, usageErr("%s: %v", flag, err)
	}
	conv.source = flag
	// Each of these flags chooses tools; without them the run offers the
	// earlier run's.
	conv.keepTools = !c.IsSet("mode") && !c.IsSet("safe") && !c.IsSet("no-tools") && !c.IsSet("tools-file") && !c.IsSet("mcp")

	start := conv.start
	set := records.Settings{}
	if start.Settings != nil {
		set = *start.Settings
	}
	sameProvider := !c.IsSet("provider") || c.String("provider") == start.Provider
	type carried struct{ flag, value string }
	defaults := []carried{
		{"provider", start.Provider},
		{"mode", start.Mode},
	}
	// A model name, a base URL and a tool protocol chosen for them belong
	// to their provider (another may lack native tools); a command model is
	// named by its --command, which the transcript does not hold.
	if sameProvider {
		defaults = append(defaults, carried{"tool-protocol", set.ToolProtocol})
		if start.Provider != "command" {
			defaults = append(defaults, carried{"model", start.Model}, carried{"base-url", set.BaseURL})
		}
	}
	if set.Safe {
		defaults = append(defaults, carried{"safe", "true"})
	}
	if conv.keepTools && len(conv.tools) == 0 {
		defaults = append(defaults, carried{"no-tools", "true"})
	}
	// The user's tools come back from where they were declared: the tools
	// file is read again and the MCP servers are started again, since a
	// server's tools exist only while it runs and the model was told it
	// could call them. With --no-tools neither is wanted. An --mcp command
	// is kept as written, so a relative path in it is still resolved in the
	// --workdir, as when it was first given.
	if !c.IsSet("no-tools") {
		defaults = append(defaults, carried{"tools-file", set.ToolsFile})
		if !c.IsSet("mcp") && len(set.MCP) > 0 && !slices.Equal(c.StringSlice("mcp"), set.MCP) {
			for _, command := range set.MCP {
				// urfave/cli splits a slice flag's value at commas, as it
				// does on the command line; such a command (possible only
				// from a config file) cannot be set back whole.
				if strings.Contains(command, ",") {
					return nil, usageErr("%s: cannot start the MCP server %q again, as its command holds a comma: give --mcp or --no-tools", flag, command)
				}
				defaults = append(defaults, carried{"mcp", command})
			}
		}
	}
	for _, d := range defaults {
		// Once the first carried --mcp is set, IsSet("mcp") is true; the
		// user's own --mcp was ruled out above.
		if d.value == "" || (c.IsSet(d.flag) && d.flag != "mcp") {
			continue
		}
		if err := c.Set(d.flag, d.value); err != nil {
			return nil, fmt.Errorf("%s: carry over --%s: %w", flag, d.flag, err)
		}
	}
	return &conv.conversation, nil
}

// carriedSettings are what run.started records, besides provider, model,
// mode, base URL and tools, so that a later --continue carries on with the
// same tools and tool protocol.
type carriedSettings struct {
	toolProtocol string
	safe         bool
	toolsFile    string // absolute: -c may run from another directory
	mcp          []string
}

// carriedFrom reads the settings to record from the flags, after
// readConversation has filled in those the earlier run had. Tools that
// --no-tools kept from loading are not recorded, so that a continued run
// does not load them either.
func carriedFrom(c *cli.Context, stdio *IO) carriedSettings {
	cs := carriedSettings{toolProtocol: c.String("tool-protocol"), safe: c.Bool("safe")}
	if !c.Bool("no-tools") {
		cs.toolsFile = absPath(stdio.Wd, c.String("tools-file"))
		cs.mcp = c.StringSlice("mcp")
	}
	return cs
}

// parsedConversation is a conversation with the run.started event it came
// from.
type parsedConversation struct {
	conversation
	start records.Event
}

// parseConversation reads a transcript's provider, tools and final
// history. A transcript of a continued run holds the whole conversation,
// so one file is always enough.
func parseConversation(data []byte) (*parsedConversation, error) {
	events, err := records.Read(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	start := events[0]
	var finished *records.Event
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == records.TypeRunFinished {
			finished = &events[i]
			break
		}
	}
	if finished == nil {
		return nil, errors.New("the run did not finish (the transcript has no run.finished event), so its conversation is incomplete")
	}
	if len(finished.History) == 0 {
		return nil, errors.New("the transcript holds no conversation history (it was written by an older ask)")
	}
	p := &parsedConversation{start: start}
	p.provider, p.history = start.Provider, finished.History
	if start.Settings != nil {
		p.tools = start.Settings.Tools
	}
	return p, nil
}

// useConversation puts the earlier conversation into a session built from
// the flags. The history is in the earlier protocol's own form, so the
// provider may change only to one speaking the same protocol.
func useConversation(conv *conversation, s *session) error {
	if conv == nil {
		return nil
	}
	if was, err := catalog.Lookup(conv.provider); err == nil && s.provider != conv.provider {
		now, err := catalog.Lookup(s.provider)
		if err != nil || now.Protocol != was.Protocol {
			return usageErr("%s: the conversation was held with %s (%s protocol) and cannot go on with %s (%s protocol); leave out --provider",
				conv.source, was.Name, was.Protocol, s.provider, now.Protocol)
		}
	}
	if conv.keepTools && len(conv.tools) > 0 {
		dropped := func(name string) bool { return !slices.Contains(conv.tools, name) }
		s.declared = slices.DeleteFunc(s.declared, func(t providers.Tool) bool { return dropped(t.Name) })
		// A tool that is not offered must not run either: a call to it is
		// answered as a call to an unknown tool.
		if all, ok := s.toolbox.(*tools.Registry); ok {
			kept, err := tools.NewRegistry(slices.DeleteFunc(all.List(), func(t tools.Tool) bool { return dropped(t.Info().Name) })...)
			if err != nil {
				return err
			}
			s.toolbox = kept
		}
	}
	s.history = conv.history
	return nil
}

// lastTranscriptPath is where the last run's transcript is kept, or "" when
// neither XDG_STATE_HOME nor HOME says where. A relative XDG_STATE_HOME is
// ignored, as the XDG base directory specification asks.
func lastTranscriptPath(getenv func(string) string) string {
	dir := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "ask", lastTranscriptName)
}

// lastRun writes a run's transcript to a private temporary file beside
// last.jsonl and renames it into place when the run ends, so that runs in
// parallel never mix their lines: the last to finish is the last run.
type lastRun struct {
	f    *os.File
	path string
	err  error // the first failed write
}

// openLastRun starts the copy, or returns nil when path is "" or cannot be
// written: a missing copy must not stop the run it records.
func openLastRun(path string) (*lastRun, error) {
	if path == "" {
		return nil, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, ".last-*.jsonl")
	if err != nil {
		return nil, err
	}
	return &lastRun{f: f, path: path}, nil
}

// writer is the recorder's sink, nil when there is no copy.
func (l *lastRun) writer() io.Writer {
	if l == nil {
		return nil
	}
	return l
}

// Write never fails, so that the recorder does not take a failing copy for
// a failing transcript; commit reports the error and keeps no copy.
func (l *lastRun) Write(p []byte) (int, error) {
	if l.err == nil {
		_, l.err = l.f.Write(p)
	}
	return len(p), nil
}

// commit closes the copy and makes it the last run.
func (l *lastRun) commit() error {
	if l == nil {
		return nil
	}
	err := errors.Join(l.err, l.f.Close())
	if err == nil {
		err = os.Rename(l.f.Name(), l.path)
	}
	if err != nil {
		os.Remove(l.f.Name())
	}
	return err
}

// startLastRun opens the copy of this run's transcript that --continue
// reads, when the session keeps one. A failure is only noted (with
// --verbose): the run goes on without it.
func (s *session) startLastRun() *lastRun {
	l, err := openLastRun(s.lastPath)
	if err != nil && s.verbose && !s.quiet {
		fmt.Fprintf(s.io.Err, "ask: not keeping this run for --continue: %v\n", err)
	}
	return l
}

// finishLastRun makes this run's transcript the one --continue reads.
func (s *session) finishLastRun(l *lastRun) {
	if err := l.commit(); err != nil && s.verbose && !s.quiet {
		fmt.Fprintf(s.io.Err, "ask: not keeping this run for --continue: %v\n", err)
	}
}
