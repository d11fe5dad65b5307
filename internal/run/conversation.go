package run

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	mathrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/ask-cli/ask/internal/history"
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
	path, flag, err := conversationPath(in)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Usagef("%s: %v", flag, err)
	}
	conv, err := ParseConversation(data)
	if err != nil {
		return nil, Usagef("%s: %v", flag, err)
	}
	conv.Source = flag
	if in.Continue {
		conv.Continues = fmt.Sprintf("continuing run %s of %s", filepath.Base(strings.TrimSuffix(path, ".jsonl")), conv.start.Time.Local().Format("2006-01-02 15:04"))
		if p := conv.start.Settings; p != nil {
			conv.Continues += fmt.Sprintf(" (%q)", shortPrompt(p.Prompt))
		}
	}
	f := in.Flags
	// Each of these flags chooses tools; without them the run offers the
	// earlier run's.
	conv.KeepTools = !f.Mode.IsGiven() && !f.Safe.IsGiven() && !f.NoTools.IsGiven() && !f.ToolsFile.IsGiven() && !f.MCP.IsGiven()
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
		path = absPath(in.Wd, in.Resume)
		// A file by that name wins; a word that could not be an id
		// (a path, a .jsonl name) is a file that is missing.
		_, statErr := os.Stat(path)
		if statErr == nil || store.Dir == "" || strings.Contains(in.Resume, "/") || strings.Contains(in.Resume, ".json") {
			return path, flag, nil
		}
		e, err := store.Find(in.Resume)
		if err != nil {
			return "", "", Usagef("%s: %v", flag, err)
		}
		return e.Path, flag, nil
	}
	flag = "--continue"
	if store.Dir == "" {
		return "", "", Usagef("--continue: no runs are kept: set XDG_STATE_HOME or HOME, and leave ASK_HISTORY_RUNS and ASK_HISTORY_SIZE unset or above 0")
	}
	dir := workdirOf(in)
	e, found, err := store.Last(dir)
	if err != nil {
		return "", "", Usagef("--continue: %v", err)
	}
	if !found {
		return "", "", Usagef("--continue: no earlier run in %s to continue (ask log lists the runs of every directory; ask --resume ID continues one)", dir)
	}
	return e.Path, flag, nil
}

// workdirOf is the working directory a run of in would have, as
// tools.NewRoot makes it (absolute, symbolic links resolved), for -c to
// find the runs made there.
func workdirOf(in Inputs) string {
	dir := in.Wd
	if in.Flags.Workdir.IsGiven() {
		dir = absPath(in.Wd, in.Flags.Workdir.Value)
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
			if !flags.BaseURL.IsGiven() {
				c.held.BaseURL = set.BaseURL
			}
		}
	}
	if set.Safe {
		s.Safe = Given(true, src)
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
	return s
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

// keepRun starts keeping a run in store under a new id, after moving
// the transcript older versions kept into it; nil keeps nothing.
func keepRun(store *history.Store, getenv func(string) string) (*lastRun, error) {
	if store == nil || store.Dir == "" {
		return nil, nil
	}
	store.Migrate(getenv)
	return openLastRun(store.Path(history.NewID(time.Now())))
}

// lastRun keeps a run's transcript for the history. Most runs are small,
// so the copy is held in memory and written out in one go when the run
// ends, to a new file that no other run can have: no temporary file, no
// rename and no write a step. The file is opened without a name while the
// run waits for the model, and named when it ends (history.OpenUnnamed);
// where it cannot be, it is created by name then. A run that outgrows
// memoryCopyLimit goes on in that unnamed file, or else in a private
// temporary file beside the kept runs, renamed into place when it ends.
// Either way runs in parallel never mix their lines, and a run is listed
// only once whole.
type lastRun struct {
	path    string
	pending []byte // the copy, while it is held in memory
	// early brings the unnamed file opened for the copy, or nil; it is
	// taken once (takeEarly).
	early   <-chan *os.File
	f       *os.File // the copy, once it outgrew memory
	unnamed bool     // f is the unnamed file, which nothing can reach by a name
	err     error    // the first failed write
	// written hashes every byte written to a named f, to know the file is
	// still ours when the run ends.
	written hash.Hash
	size    int64
}

// memoryCopyLimit is how much of a run's transcript lastRun holds in
// memory; a one-shot answer writes a few kilobytes.
const memoryCopyLimit = 1 << 20

// openLastRun starts the copy, or returns nil when path is "": a missing
// copy must not stop the run it records.
func openLastRun(path string) (*lastRun, error) {
	if path == "" {
		return nil, nil
	}
	// Both are done while the run waits for the model. The copies of
	// killed runs are rare, and only an hour old one is taken for such;
	// looking for them costs a read of a directory that holds every kept
	// run, so about one run in staleCheckEvery looks.
	dir := filepath.Dir(path)
	lookForStale := mathrand.N(staleCheckEvery) == 0
	early := make(chan *os.File, 1)
	go func() {
		if lookForStale {
			removeStaleCopies(dir, time.Now())
		}
		early <- history.OpenUnnamed(dir)
	}()
	return &lastRun{path: path, early: early}, nil
}

// takeEarly waits for the unnamed file opened for the copy; nil when there
// is none or it was taken.
func (l *lastRun) takeEarly() *os.File {
	if l.early == nil {
		return nil
	}
	f := <-l.early
	l.early = nil
	return f
}

// lastTempPattern names the private copies of large runs under way.
const lastTempPattern = ".last-*.jsonl"

// staleCheckEvery is how often, on average, a run removes stale copies.
const staleCheckEvery = 16

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
	if l.err != nil {
		return len(p), nil
	}
	l.size += int64(len(p))
	if l.f == nil && l.size <= memoryCopyLimit {
		l.pending = append(l.pending, p...)
		return len(p), nil
	}
	if l.f == nil {
		if l.err = l.spill(); l.err != nil {
			return len(p), nil
		}
	}
	n, err := l.f.Write(p)
	if l.written != nil {
		l.written.Write(p[:n])
	}
	l.err = err
	return len(p), nil
}

// spill moves the copy held in memory to a file: the unnamed one opened
// for it, or else a private temporary file.
func (l *lastRun) spill() error {
	if f := l.takeEarly(); f != nil {
		l.f, l.unnamed = f, true
		_, err := f.Write(l.pending)
		l.pending = nil
		return err
	}
	dir := filepath.Dir(l.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, lastTempPattern)
	if err != nil {
		return err
	}
	l.f, l.written = f, sha256.New()
	_, err = f.Write(l.pending)
	l.written.Write(l.pending)
	l.pending = nil
	return err
}

// commit writes the copy to its place in the history. A copy held in
// memory becomes a new file there, and the unnamed file is named. One in a
// temporary file is renamed into place if it is still the file this run
// wrote, byte for byte: it waited in a directory that other processes can
// write to, and whatever --continue reads is taken as ask's own record.
func (l *lastRun) commit() error {
	if l == nil {
		return nil
	}
	if l.f == nil {
		if l.err != nil { // a spill that failed
			return l.err
		}
		if f := l.takeEarly(); f != nil && history.Link(f, l.pending, l.path) == nil {
			return nil
		}
		// No unnamed file, or naming it failed: the copy is still in
		// memory.
		return l.writeNew()
	}
	if l.unnamed {
		if l.err != nil {
			l.f.Close()
			return l.err
		}
		return history.Link(l.f, nil, l.path)
	}
	ours, _ := l.f.Stat()
	err := errors.Join(l.err, l.f.Close())
	if err == nil {
		err = l.stillOurs(ours)
	}
	if err == nil {
		err = os.Rename(l.f.Name(), l.path)
	}
	if err != nil {
		os.Remove(l.f.Name())
	}
	return err
}

// writeNew writes the copy held in memory to l.path, which must not exist:
// an id is never kept twice.
func (l *lastRun) writeNew() error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(l.pending)
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(l.path)
	}
	return err
}

// stillOurs checks that the copy's path names the file this run created
// and holds what it wrote.
func (l *lastRun) stillOurs(ours os.FileInfo) error {
	changed := fmt.Errorf("%s was changed by another process while the run wrote it; not keeping it", l.f.Name())
	now, err := os.Lstat(l.f.Name())
	if err != nil || ours == nil || !os.SameFile(ours, now) || now.Size() != l.size {
		return changed
	}
	f, err := os.Open(l.f.Name())
	if err != nil {
		return changed
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil || !bytes.Equal(h.Sum(nil), l.written.Sum(nil)) {
		return changed
	}
	return nil
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
