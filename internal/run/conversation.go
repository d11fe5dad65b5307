package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/worktree"

	"mvdan.cc/sh/v3/syntax"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/records"
)

// Conversations: every run of the main command also keeps its transcript
// among the past runs (internal/history), and `ask -c` carries on from the
// last one of the working directory, `ask --resume ID|FILE` from any. The
// conversation itself comes from the transcript's run.finished event, whose
// history is the loop's own (every message in the protocol's form, each
// tool call answered); the new run records it again in its run.started
// settings, so that `ask replay` sends the same requests.

// Conversation is an earlier run to carry on from.
type Conversation struct {
	// Source is the flag that named it, for messages: "--continue" or
	// "--resume FILE".
	Source   string
	Provider string   // the provider it was held with
	Tools    []string // the tools it offered
	History  []json.RawMessage
	// Continues says which run --continue carries on, for stderr.
	Continues string
	// KeepTools: no flag chose the tools, so the run offers the same ones.
	KeepTools bool
	start     records.Event
	held      Held // see Held
	// paused is the deferred run ask resume carries on (Inputs.Paused).
	paused *pendingRun
	// workdir is the git worktree the deferred run worked in, "" for none.
	workdir string
}

// readConversation reads the transcript named by --continue or --resume,
// or returns nil when neither was given.
func readConversation(in Inputs) (*Conversation, error) {
	if !in.Continue && in.Resume == "" {
		return nil, nil
	}
	if in.Continue && in.Resume != "" {
		return nil, fault.Usagef("--continue and --resume both name the conversation to carry on: choose one")
	}
	path, flag, err := conversationPath(in)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.Usagef("%s: %v", flag, err)
	}
	var conv *Conversation
	if in.Paused {
		conv, err = deferredConversation(data)
	} else {
		conv, err = ParseConversation(data)
	}
	if err != nil {
		return nil, fault.Usagef("%s: %v", flag, err)
	}
	conv.Source = flag
	if in.Continue {
		conv.Continues = fmt.Sprintf("continuing run %s of %s", filepath.Base(strings.TrimSuffix(path, ".jsonl")), conv.start.Time.Local().Format("2006-01-02 15:04"))
		if p := conv.start.Settings; p != nil {
			conv.Continues += fmt.Sprintf(" (%q)", shortPrompt(p.Prompt))
		}
	}
	f := in.Flags
	if conv.paused != nil && !f.Workdir.IsGiven() {
		conv.worktreeWorkdir(in.Wd)
	}
	// Each of these flags chooses tools; without them the run offers the
	// earlier run's.
	conv.KeepTools = !f.Mode.IsGiven() && !f.Safe.IsGiven() && !f.NoTools.IsGiven() && !f.ToolsFile.IsGiven() && !f.MCP.IsGiven() && !f.NoMCP.IsGiven()
	return conv, nil
}

// conversationPath is the transcript --continue or --resume names, and
// the flag that named it: for --continue the last kept run whose working
// directory is this run's; for --resume a file, else a kept run's id.
func conversationPath(in Inputs) (path, flag string, err error) {
	store, err := history.Open(in.Getenv)
	if err != nil {
		return "", "", asKind(Usage, err)
	}
	store.Migrate(in.Getenv)
	if in.Resume != "" {
		flag = "--resume " + in.Resume
		if in.Paused {
			flag = "ask resume " + in.Resume
		}
		path = AbsPath(in.Wd, in.Resume)
		// A word that could not be an id (a path, a .jsonl name) is a
		// file. Else a kept run the word names ("last", an id or its
		// start) wins over a file of that name: the checkout's file
		// `last` must not stand in for the person's own run (./last
		// names the file).
		if store.Dir == "" || strings.Contains(in.Resume, "/") || strings.Contains(in.Resume, ".json") {
			return path, flag, nil
		}
		e, err := store.Resolve(in.Resume, workdirOf(in))
		if err != nil {
			if _, statErr := os.Stat(path); statErr == nil {
				return path, flag, nil
			}
			return "", "", fault.Usagef("%s: %v", flag, err)
		}
		return e.Path, flag, nil
	}
	flag = "--continue"
	if store.Dir == "" {
		return "", "", fault.Usagef("--continue: no runs are kept: set XDG_STATE_HOME or HOME, and leave ASK_HISTORY_RUNS and ASK_HISTORY_SIZE unset or above 0")
	}
	dir := workdirOf(in)
	e, found, err := store.Last(dir)
	if err != nil {
		return "", "", fault.Usagef("--continue: %v", err)
	}
	if !found {
		return "", "", fault.Usagef("--continue: no earlier run in %s to continue (ask log lists the runs of every directory; ask --resume ID continues one)", dir)
	}
	return e.Path, flag, nil
}

// workdirOf is the working directory a run of in would have, as
// tools.NewRoot makes it (absolute, symbolic links resolved), for -c to
// find the runs made there.
func workdirOf(in Inputs) string {
	given := ""
	if in.Flags.Workdir.IsGiven() {
		given = in.Flags.Workdir.Value
	}
	return Workdir(in.Wd, given)
}

// Workdir is the working directory a run in wd with --workdir given ("":
// none) has, as its kept transcript records it: absolute, links resolved.
// The commands that find "the last run here" (-c, undo, log show last)
// all look it up by this.
func Workdir(wd, given string) string {
	dir := wd
	if given != "" {
		dir = AbsPath(wd, given)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}

// shortPrompt is a prompt cut to one short line, for messages.
func shortPrompt(p string) string {
	p = strings.Join(strings.Fields(p), " ")
	if r := []rune(p); len(r) > 60 {
		p = string(r[:60]) + "…"
	}
	return p
}

// ParseConversation reads a transcript's provider, tools and final
// history. A transcript of a continued run holds the whole conversation,
// so one file is always enough.
func ParseConversation(data []byte) (*Conversation, error) {
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
	if finished.Status == loop.StatusPending {
		return nil, errors.New("the run is pending in a provider's batch: ask batch --resume carries it on")
	}
	if finished.Status == loop.StatusDeferred {
		return nil, fmt.Errorf("run %s waits on deferred calls: ask resume %s decides them", start.ID, start.ID)
	}
	if len(finished.History) == 0 {
		return nil, errors.New("the transcript holds no conversation history (it was written by an older ask)")
	}
	c := &Conversation{start: start, Provider: start.Provider, History: finished.History}
	if start.Settings != nil {
		c.Tools = start.Settings.Tools
	}
	return c, nil
}

// worktreeWorkdir carries a deferred run on in the git worktree it
// worked in (--worktree), so that its calls never reach the main
// checkout. Only a worktree ask made in the repository of wd is taken
// from the transcript, which anyone may have edited: no other directory.
func (c *Conversation) worktreeWorkdir(wd string) {
	set := c.start.Settings
	if set == nil || set.Workdir == "" || !worktree.Holds(context.Background(), wd, set.Workdir) {
		return
	}
	c.workdir = set.Workdir
}

// deferredConversation reads the transcript of a deferred run for ask
// resume: its conversation, as ParseConversation's, and the run itself.
func deferredConversation(data []byte) (*Conversation, error) {
	p, err := readDeferred(data)
	if err != nil {
		return nil, err
	}
	c := &Conversation{start: p.start, Provider: p.start.Provider, History: p.end.History, paused: p}
	if p.start.Settings != nil {
		c.Tools = p.start.Settings.Tools
	}
	return c, nil
}

// layer is what the earlier run says: its provider, mode and tools, so
// that the conversation goes on as it was held. The user's flags still
// win, each over its own setting. A carried setting also beats the
// environment and the config file: a changed ASK_BASE_URL or config must
// not send the conversation elsewhere half-way.
func (c *Conversation) layer(flags Settings) (Settings, error) {
	src := "conversation " + c.Source
	set := records.Settings{}
	if c.start.Settings != nil {
		set = *c.start.Settings
	}
	s := Settings{Conversation: c}
	// A transcript's values go through their rows' Parse, as every
	// layer's do: it is a file anyone may have edited.
	var bad error
	str := func(name, v string) {
		if v == "" || bad != nil {
			return
		}
		if err := s.Values.Give(name, v, src); err != nil {
			bad = fault.Usagef("%s: %v", src, err)
		}
	}
	str("provider", c.start.Provider)
	str("mode", c.start.Mode)
	// A model name, a base URL and a tool protocol chosen for them belong
	// to their provider (another may lack native tools); a local program
	// is named by its --command, which the transcript does not hold.
	if !flags.Provider.IsGiven() || flags.Provider.Value == c.start.Provider {
		str("tool-protocol", set.ToolProtocol)
		if row, err := catalog.Lookup(c.start.Provider); err == nil && !row.LocalProgram {
			str("model", c.start.Model)
			if !flags.BaseURL.IsGiven() {
				c.held.BaseURL = set.BaseURL
			}
		}
	}
	if set.Safe {
		s.Safe = Given(true, src)
	}
	if c.workdir != "" {
		s.Workdir = Given(c.workdir, src)
	}
	if c.KeepTools && len(c.Tools) == 0 {
		s.NoTools = Given(true, src)
	}
	// The user's tools come back only from where they were declared: the
	// tools file read again, the MCP servers started again. With --no-tools
	// neither is wanted, and a flag for either replaces it.
	if !flags.NoTools.IsGiven() {
		if !flags.ToolsFile.IsGiven() {
			c.held.ToolsFile = set.ToolsFile
		}
		if !flags.MCP.IsGiven() {
			c.held.MCP = set.MCP
		}
	}
	return s, bad
}

// Held is what an earlier run was given that reaches beyond ask: the
// endpoint its key went to, the programs it started. A transcript is a file
// that anyone (a model with a write tool included) may have edited, so a
// continued run takes none of these from it unless the user says so: a
// flag, or a yes to Carry's question on a terminal.
type Held struct {
	BaseURL   string
	ToolsFile string
	MCP       []string
}

// Flags are the flags that give the held settings, as a user would type
// them, for a question or a note.
func (h Held) Flags() []string {
	var out []string
	if h.BaseURL != "" {
		out = append(out, "--base-url "+shellQuote(h.BaseURL))
	}
	if h.ToolsFile != "" {
		out = append(out, "--tools-file "+shellQuote(h.ToolsFile))
	}
	for _, m := range h.MCP {
		out = append(out, "--mcp "+shellQuote(m))
	}
	return out
}

// Held is what the conversation's run was given beyond ask that this run
// does not have: empty when the flags gave their own or it had none.
func (c *Conversation) Held() Held { return c.held }

// carryOn says which conversation the run carries on, and asks the person
// at the terminal (env.Confirm) whether it goes on with what its
// transcript says the earlier run was given beyond ask; without a
// terminal, or without a yes, it goes on without them and says how to
// give them.
func (s *Settings) carryOn(ctx context.Context, env Env) {
	c := s.Conversation
	if c.Continues != "" && env.Notes != nil {
		fmt.Fprintf(env.Notes, "ask: %s\n", termtext.Safe(c.Continues))
	}
	// A plan carried on stays a plan unless the user says otherwise: say
	// so, since "go on" after a plan usually means "do it".
	if strings.HasPrefix(s.Mode.Source, "conversation") && s.Mode.Value != policy.ModeAgent && env.Notes != nil {
		fmt.Fprintf(env.Notes, "ask: going on in --mode %s, as the earlier run; give --mode agent for it to act\n", s.Mode.Value)
	}
	held := c.Held().Flags()
	if len(held) == 0 {
		return
	}
	flags := termtext.Safe(strings.Join(held, " "))
	if env.Confirm != nil && env.Confirm(ctx, fmt.Sprintf("ask: %s: the earlier run had %s; use them again? [y]es [n]o: ", c.Source, flags)) {
		s.CarryHeld()
		return
	}
	if env.Notes != nil {
		fmt.Fprintf(env.Notes, "ask: %s: going on without what the earlier run had beyond ask; to use it, give %s\n", c.Source, flags)
	}
}

// CarryHeld takes the conversation's held settings after all, as the user
// confirmed.
func (s *Settings) CarryHeld() {
	c := s.Conversation
	if c == nil {
		return
	}
	src := "conversation " + c.Source + ", confirmed"
	if h := c.held; h.BaseURL != "" {
		s.BaseURL = Given(h.BaseURL, src)
	}
	if h := c.held; h.ToolsFile != "" {
		s.ToolsFile = Given(h.ToolsFile, src)
	}
	if h := c.held; len(h.MCP) > 0 {
		s.MCP = Given(h.MCP, src)
	}
	c.held = Held{}
}

// shellQuote quotes s as a shell reads it, where it needs quotes.
func shellQuote(s string) string {
	if q, err := syntax.Quote(s, syntax.LangBash); err == nil {
		return q
	}
	return fmt.Sprintf("%q", s) // a NUL byte, which no shell word holds
}

// checkProvider refuses to carry a conversation to a provider that speaks
// another protocol: the history is in the earlier protocol's own form.
func (c *Conversation) checkProvider(now catalog.Provider) error {
	was, err := catalog.Lookup(c.Provider)
	if err != nil || now.Name == c.Provider || now.Protocol == was.Protocol {
		return nil
	}
	return fault.Usagef("%s: the conversation was held with %s (%s protocol) and cannot go on with %s (%s protocol); leave out --provider",
		c.Source, was.Name, was.Protocol, now.Name, now.Protocol)
}

// AbsPath makes p absolute in wd; it is not cleaned, so that it reads as
// the user wrote it.
func AbsPath(wd, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return wd + "/" + p
}
