package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/records"
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

// Conversation is an earlier run to carry on from.
type Conversation struct {
	// Source is the flag that named it, for messages: "--continue" or
	// "--resume FILE".
	Source   string
	Provider string   // the provider it was held with
	Tools    []string // the tools it offered
	History  []json.RawMessage
	// KeepTools: no flag chose the tools, so the run offers the same ones.
	KeepTools bool
	start     records.Event
}

// readConversation reads the transcript named by --continue or --resume,
// or returns nil when neither was given.
func readConversation(in Inputs) (*Conversation, error) {
	if !in.Continue && in.Resume == "" {
		return nil, nil
	}
	if in.Continue && in.Resume != "" {
		return nil, Usagef("--continue and --resume both name the conversation to carry on: choose one")
	}
	path, flag := absPath(in.Wd, in.Resume), "--resume "+in.Resume
	if in.Resume == "" {
		flag = "--continue"
		if path = LastTranscriptPath(in.Getenv); path == "" {
			return nil, Usagef("--continue: cannot tell where the last run was kept: set XDG_STATE_HOME or HOME")
		}
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && in.Resume == "":
		return nil, Usagef("--continue: there is no earlier run to continue (%s does not exist)", path)
	case err != nil:
		return nil, Usagef("%s: %v", flag, err)
	}
	conv, err := ParseConversation(data)
	if err != nil {
		return nil, Usagef("%s: %v", flag, err)
	}
	conv.Source = flag
	f := in.Flags
	// Each of these flags chooses tools; without them the run offers the
	// earlier run's.
	conv.KeepTools = !f.Mode.IsGiven() && !f.Safe.IsGiven() && !f.NoTools.IsGiven() && !f.ToolsFile.IsGiven() && !f.MCP.IsGiven()
	return conv, nil
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
	if len(finished.History) == 0 {
		return nil, errors.New("the transcript holds no conversation history (it was written by an older ask)")
	}
	c := &Conversation{start: start, Provider: start.Provider, History: finished.History}
	if start.Settings != nil {
		c.Tools = start.Settings.Tools
	}
	return c, nil
}

// layer is what the earlier run says: its provider, mode and tools, so
// that the conversation goes on as it was held. The user's flags still
// win, each over its own setting. A carried setting also beats the
// environment and the config file: a changed ASK_BASE_URL or config must
// not send the conversation elsewhere half-way.
func (c *Conversation) layer(flags Settings) Settings {
	src := "conversation " + c.Source
	set := records.Settings{}
	if c.start.Settings != nil {
		set = *c.start.Settings
	}
	s := Settings{Conversation: c}
	str := func(v string, to *Setting[string]) {
		if v != "" {
			*to = Given(v, src)
		}
	}
	str(c.start.Provider, &s.Provider)
	str(c.start.Mode, &s.Mode)
	// A model name, a base URL and a tool protocol chosen for them belong
	// to their provider (another may lack native tools); a local program
	// is named by its --command, which the transcript does not hold.
	if !flags.Provider.IsGiven() || flags.Provider.Value == c.start.Provider {
		str(set.ToolProtocol, &s.ToolProtocol)
		if row, err := catalog.Lookup(c.start.Provider); err == nil && !row.LocalProgram {
			str(c.start.Model, &s.Model)
			str(set.BaseURL, &s.BaseURL)
		}
	}
	if set.Safe {
		s.Safe = Given(true, src)
	}
	if c.KeepTools && len(c.Tools) == 0 {
		s.NoTools = Given(true, src)
	}
	// The user's tools come back from where they were declared: the tools
	// file is read again and the MCP servers are started again, since a
	// server's tools exist only while it runs and the model was told it
	// could call them. With --no-tools neither is wanted. An MCP command
	// is kept as written, so a relative path in it is still resolved in the
	// workdir, as when it was first given.
	if !flags.NoTools.IsGiven() {
		str(set.ToolsFile, &s.ToolsFile)
		if len(set.MCP) > 0 {
			s.MCP = Given(set.MCP, src)
		}
	}
	return s
}

// LastTranscriptPath is where the last run's transcript is kept, or ""
// when neither XDG_STATE_HOME nor HOME says where. A relative
// XDG_STATE_HOME is ignored, as the XDG base directory specification asks.
func LastTranscriptPath(getenv func(string) string) string {
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

// openLastRun starts the copy, or returns nil when path is "": a missing
// copy must not stop the run it records.
func openLastRun(path string) (*lastRun, error) {
	if path == "" {
		return nil, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	removeStaleCopies(dir, time.Now())
	f, err := os.CreateTemp(dir, lastTempPattern)
	if err != nil {
		return nil, err
	}
	return &lastRun{f: f, path: path}, nil
}

// lastTempPattern names the private copies of runs under way.
const lastTempPattern = ".last-*.jsonl"

// staleAfter is how long a copy may go unwritten before it is taken for
// the leftover of a run that was killed (SIGKILL, a second Ctrl-C, a
// crash). A run under way writes at least every step, and --timeout
// defaults to minutes.
const staleAfter = time.Hour

// removeStaleCopies deletes the copies in dir that no run has written for
// staleAfter, so that killed runs do not pile them up; the copies of runs
// still going are newer and stay. It is best effort: a copy it cannot
// remove stops nothing.
func removeStaleCopies(dir string, now time.Time) {
	names, err := filepath.Glob(filepath.Join(dir, lastTempPattern))
	if err != nil {
		return
	}
	for _, name := range names {
		if info, err := os.Lstat(name); err == nil && info.Mode().IsRegular() && now.Sub(info.ModTime()) > staleAfter {
			os.Remove(name)
		}
	}
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

// checkProvider refuses to carry a conversation to a provider that speaks
// another protocol: the history is in the earlier protocol's own form.
func (c *Conversation) checkProvider(now catalog.Provider) error {
	was, err := catalog.Lookup(c.Provider)
	if err != nil || now.Name == c.Provider || now.Protocol == was.Protocol {
		return nil
	}
	return Usagef("%s: the conversation was held with %s (%s protocol) and cannot go on with %s (%s protocol); leave out --provider",
		c.Source, was.Name, was.Protocol, now.Name, now.Protocol)
}

// absPath makes p absolute in wd; it is not cleaned, so that it reads as
// the user wrote it.
func absPath(wd, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return wd + "/" + p
}
