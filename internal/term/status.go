package term

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/termtext"
)

// StatusLine is the one live line on stderr: the step, the tool running
// with a short form of its arguments, and the time so far, such as
//
//	· step 2/8 · read_file go.mod · 3.2s
//
// Its caller turns it on only when stderr is a terminal and --quiet is
// off. While it is shown, a ticker redraws it so that the time moves during
// a long request or tool; answer text clears it, and the next step draws it
// again. An approval question holds it off the terminal until it is
// answered.
type StatusLine struct {
	mu      sync.Mutex
	w       io.Writer
	on      bool
	paint   Palette
	width   int
	started time.Time
	every   time.Duration // how often a shown line is redrawn
	last    loop.Progress
	shown   bool
	ticking bool
	// midLine: answer text on the same terminal ended without a newline,
	// so the status, or a question, must go below it instead of over it.
	// It is kept whether or not the line is on: a question is asked on the
	// terminal with or without it. ended says the status did end such a
	// line, so the answer need not.
	midLine, ended bool
	// asked: a question was answered on the terminal since the last
	// answer text, so the cursor is at the start of the line below it.
	asked bool
	// holds counts open approval questions; while there is one, the line
	// is not drawn, and heldShown says whether to draw it after.
	holds     int
	heldShown bool
	// starting names the MCP servers the run waits for before its first
	// step; the line says so until they are up.
	starting []string
}

// NewStatusLine is the status line on w, in the colours of paint, for a
// terminal width columns wide; off, it draws nothing.
func NewStatusLine(w io.Writer, on bool, paint Palette, width int) *StatusLine {
	return &StatusLine{w: w, on: on, paint: paint, started: time.Now(), width: width, every: 200 * time.Millisecond}
}

// Progress shows the loop's progress.
func (s *StatusLine) Progress(p loop.Progress) {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = p
	s.starting = nil
	if s.holds > 0 {
		s.heldShown = true
		return
	}
	s.show()
}

// MCPStarting shows that the run is waiting for MCP servers to start, such
// as "· starting MCP servers memory, fs · 1.2s"; nil clears it, and the
// run's first progress replaces it.
func (s *StatusLine) MCPStarting(names []string) {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.starting = names
	if len(names) == 0 {
		s.erase()
		return
	}
	if s.holds > 0 {
		s.heldShown = true
		return
	}
	s.show()
}

// show draws the line, below unfinished answer text, and keeps it ticking;
// the caller holds mu.
func (s *StatusLine) show() {
	if s.midLine {
		io.WriteString(s.w, "\n")
		s.midLine, s.ended = false, true
	}
	s.draw()
	if !s.ticking {
		s.ticking = true
		go s.tick()
	}
}

// tick redraws the line until it is cleared or held.
func (s *StatusLine) tick() {
	for {
		time.Sleep(s.every)
		if !s.redraw() {
			return
		}
	}
}

// redraw draws the shown line again, so that its time moves. It reports
// false, and the ticker stops, once the line is cleared or held.
func (s *StatusLine) redraw() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.shown {
		s.ticking = false
		return false
	}
	s.draw()
	return true
}

// draw writes the line over the current one; the caller holds mu.
func (s *StatusLine) draw() {
	io.WriteString(s.w, "\r\033[K"+s.paint.Dim(s.text(time.Since(s.started))))
	s.shown = true
}

// text is the line's content, kept within the terminal's width so that it
// never wraps (a wrapped line cannot be cleared with \r).
func (s *StatusLine) text(elapsed time.Duration) string {
	if len(s.starting) > 0 {
		head := "· starting MCP server "
		if len(s.starting) > 1 {
			head = "· starting MCP servers "
		}
		tail := " · " + formatElapsed(elapsed)
		room := s.width - 1 - len([]rune(head)) - len([]rune(tail))
		return head + termtext.Shorten(termtext.Safe(strings.Join(s.starting, ", ")), max(room-1, 4)) + tail
	}
	head := fmt.Sprintf("· step %d/%d · ", s.last.Step, s.last.MaxSteps)
	tail := " · " + formatElapsed(elapsed)
	what := "thinking"
	if s.last.Compacting {
		what = "compacting the conversation to fit the model's window"
	}
	if s.last.Tool != "" {
		what = termtext.Safe(s.last.Tool) // the model names it: an unknown tool's name is its words
		if args := shortArgs(s.last.Arguments); args != "" {
			what += " " + termtext.Safe(args) // a model's text: nothing it writes redraws the line
		}
	}
	room := s.width - 1 - len([]rune(head)) - len([]rune(tail))
	return head + termtext.Shorten(what, max(room-1, 8)) + tail
}

// Wrote notes answer text written to stdout, which shares the terminal.
func (s *StatusLine) Wrote(text string) {
	if text == "" {
		return
	}
	s.mu.Lock()
	s.midLine, s.ended = !strings.HasSuffix(text, "\n"), false
	s.asked = false
	s.mu.Unlock()
}

// EndedLine reports whether the status went below answer text that ended
// without a newline, ending its line, since that text was written.
func (s *StatusLine) EndedLine() bool {
	if !s.on {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// takeMidLine reports whether answer text left the cursor mid-line, for a
// question about to end that line; from then on, it is not. A nil line
// knows of no text.
func (s *StatusLine) takeMidLine() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	mid := s.midLine
	s.midLine = false
	return mid
}

// answered notes that a question was answered: the person's Enter left
// the cursor at the start of a line.
func (s *StatusLine) answered() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.midLine, s.asked = false, true
	s.mu.Unlock()
}

// afterQuestion reports whether a question was answered since the last
// answer text.
func (s *StatusLine) afterQuestion() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked
}

// Clear erases the line until the next progress.
func (s *StatusLine) Clear() {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heldShown = false
	s.erase()
}

// Above is w with the line cleared before each write, so that a note
// shown during the run stands on a line of its own. What a note quotes (a
// hook's reason, a denied command, an MCP server's stderr) is escaped as
// termtext.Writer does: it cannot drive the terminal.
func (s *StatusLine) Above(w io.Writer) io.Writer {
	return &noteWriter{line: s, w: w, safe: &termtext.Writer{W: w}}
}

type noteWriter struct {
	mu   sync.Mutex
	line *StatusLine
	w    io.Writer
	safe *termtext.Writer
}

func (n *noteWriter) Write(b []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.line.Clear()
	n.line.endAnswerLine(n.w)
	return n.safe.Write(b)
}

// endAnswerLine ends the line answer text left unfinished, so that a note
// (a check's line, a Stop hook's) starts on a line of its own rather than
// after the answer's last word.
func (s *StatusLine) endAnswerLine(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.midLine {
		io.WriteString(w, "\n")
		s.midLine, s.ended = false, true
	}
}

// erase removes a shown line; the caller holds mu.
func (s *StatusLine) erase() {
	if s.shown {
		io.WriteString(s.w, "\r\033[K")
		s.shown = false
	}
}

// hold erases the line and keeps it off the terminal until release, while
// an approval question is open there: a redraw starts with "\r\033[K",
// which would erase the question.
func (s *StatusLine) hold() {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds == 0 {
		s.heldShown = s.shown
	}
	s.holds++
	s.erase()
}

// release ends a hold and draws the line again if it was shown, or asked
// for, meanwhile.
func (s *StatusLine) release() {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds == 0 {
		return
	}
	s.holds--
	if s.holds == 0 && s.heldShown {
		s.heldShown = false
		s.show()
	}
}

// HoldWhileAsking wraps the approval prompter so that line is off the
// terminal while a question is open and back after the answer. A terminal
// Prompter also learns from line where answer text left the cursor, so
// that its questions start on a line of their own.
func HoldWhileAsking(line *StatusLine, p policy.Prompter) policy.Prompter {
	if t, ok := p.(*Prompter); ok {
		t.line = line
	}
	return statusHoldingPrompter{Prompter: p, line: line}
}

type statusHoldingPrompter struct {
	policy.Prompter
	line *StatusLine
}

func (h statusHoldingPrompter) Approve(ctx context.Context, calls []policy.Pending) ([]policy.Answer, error) {
	h.line.hold()
	defer h.line.release()
	return h.Prompter.Approve(ctx, calls)
}

// shortArgs is the short form of a tool call's arguments: the values of a
// JSON object in order, strings bare (`read_file go.mod`, `shell git
// status`), others as key=value; anything else as it is.
func shortArgs(args string) string {
	r := gjson.Parse(args)
	if !r.IsObject() {
		return strings.Join(strings.Fields(args), " ")
	}
	var parts []string
	r.ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.String {
			parts = append(parts, v.Str)
		} else {
			parts = append(parts, k.String()+"="+v.Raw)
		}
		return true
	})
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}

// formatElapsed is 3.2s under a minute, 1m05s after.
func formatElapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}
