package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"encoding/json"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

// Compaction (DESIGN §9, Long runs): before a request would fill
// Config.CompactAt percent of Config.Window, old tool results become
// one-line stubs; if that is not enough, one request summarises the oldest
// steps. The system prompt, the task's prompt, the last steps and every call
// id stay as they were. Only when the last step alone would not fit the
// window are its largest results cut, to their head and tail with a line
// saying so: a run is not lost to one command's long output.

const (
	// DefaultCompactAt is the share of the window, in percent, a request
	// may fill before the run compacts.
	DefaultCompactAt = 80
	// keepSteps are the last steps a compaction leaves verbatim; a
	// summary that cannot fit otherwise keeps fewer, never none.
	keepSteps = 3
	// bytesPerToken is what the estimate counts a token of what a
	// request adds to the last one the provider counted: JSON bodies run
	// at 3 to 4 bytes a token, and the low end errs towards compacting
	// early. What a request drops is counted at bytesPerDroppedToken, the
	// high end, for the same reason.
	bytesPerToken        = 3
	bytesPerDroppedToken = 5
	// summaryRounds bounds the summarising requests of one compaction:
	// a conversation whose older part does not fit one request is
	// summarised a part at a time.
	summaryRounds = 4
	// cutKeep is the least of a result a cut leaves, head and tail.
	cutKeep = 512
)

// SummaryPrompt is the last user turn of a summarising request.
const SummaryPrompt = "ask is compacting this conversation to fit the model's context window. " +
	"Write a summary of the work so far that lets you carry on without it: the task, what was found (files, commands, results, errors), " +
	"what was changed and where, what was decided and why, and what is left to do. Be concise and specific; quote exact names, paths and values. " +
	"Do not call tools; answer with the summary only."

// summaryHeader opens the user turn that stands for summarised steps.
const summaryHeader = "[ask compacted steps %d–%d of this run to fit the model's context window; the run's transcript keeps them whole. Summary:]\n\n"

// ErrContextWindow marks a run whose conversation cannot fit the model's
// window even compacted (or with --compact off): a provider's limit, so
// a run ending on it exits 3 (DESIGN §7), its transcript whole.
var ErrContextWindow = errors.New("the conversation does not fit the model's context window")

// CompactNote tells Config.OnCompact that a compaction starts (Done false)
// or has ended (Done true, with what it did).
type CompactNote struct {
	Done bool
	records.Compaction
}

// span is one step of this run in the history: its reply from start, and
// the results of its calls in history[resultsAt:resultsEnd].
type span struct {
	step                  int
	start                 int
	resultsAt, resultsEnd int
	results               []providers.ToolResult
	pruned                bool
	// uncut are the results as the tools gave them, once one was cut.
	uncut []providers.ToolResult
}

// shift moves the span's indices by d, for a change before it.
func (s *span) shift(d int) {
	s.start += d
	if s.resultsEnd > 0 {
		s.resultsAt += d
		s.resultsEnd += d
	}
}

// compactor holds what the loop knows of the history's shape and of the
// last request the provider counted.
type compactor struct {
	window, at int
	off        bool
	// taskEnd is the length of the history's fixed head: an earlier
	// conversation and the task's prompt, never compacted.
	taskEnd int
	spans   []span
	// lastBody is the size of the last step's request body and
	// lastTokens the input tokens its usage reported (0: none yet).
	lastBody, lastTokens int
	// sent is the size of the body being sent now.
	sent int
	// fitting is the request being fitted: compaction measures the
	// history as that request would carry it.
	fitting providers.Request
	// firstStep is this run's first; summarised says a summary of the
	// steps before spans[0] stands at taskEnd.
	firstStep  int
	summarised bool
}

func (c *compactor) threshold() int { return c.window * c.at / 100 }

// estimate is the tokens of a request body (Estimate).
func (c *compactor) estimate(body []byte) int { return Estimate(c.lastBody, c.lastTokens, len(body)) }

// learn keeps the input tokens the provider counted in the request just
// sent.
func (c *compactor) learn(usage providers.Usage) {
	if usage.InputTokens > 0 {
		c.lastBody, c.lastTokens = c.sent, usage.InputTokens
	}
}

// Estimate is the tokens of a request of size bytes, given the last
// request the provider counted (lastBytes long, lastTokens tokens; 0 for
// none): that count, plus what the body adds, or less what it drops. The
// provider's count carries what bytes cannot tell (a hidden system prompt
// of its own, a tokenizer's ratio), so only the difference is guessed.
func Estimate(lastBytes, lastTokens, size int) int {
	if lastTokens <= 0 {
		return size/bytesPerToken + 1
	}
	if d := size - lastBytes; d >= 0 {
		return lastTokens + d/bytesPerToken + 1
	} else {
		return max(lastTokens+d/bytesPerDroppedToken, 1)
	}
}

// EstimateTokens is the estimate a run makes of a request body before any
// usage is known.
func EstimateTokens(body []byte) int { return Estimate(0, 0, len(body)) }

// size estimates req's tokens as the protocol would send it.
func (r *runner) size(req providers.Request) (int, error) {
	var body []byte
	var err error
	if b, ok := r.cfg.Model.(builder); ok {
		body, err = b.Build(req) // the body as it will be sent
	} else {
		if req.Model == "" {
			// A stand-in of a usual length renders a body of the
			// same size.
			req.Model = "model-name-of-usual-length"
		}
		body, err = r.protocol().BuildRequest(req)
	}
	if err != nil {
		return 0, fmt.Errorf("estimate the request: %w", err)
	}
	return r.comp.estimate(body), nil
}

// builder renders a request as the model will send it
// (*providers.Caller).
type builder interface {
	Build(providers.Request) ([]byte, error)
}

// fit compacts the history before req is sent when it would cross the
// threshold, and refuses a request over the window: it returns the
// request to send.
func (r *runner) fit(ctx context.Context, step int, req providers.Request) (providers.Request, error) {
	c := &r.comp
	if c.window <= 0 {
		return req, nil
	}
	before, err := r.size(req)
	if err != nil || before <= c.threshold() {
		return req, err
	}
	if !c.off {
		c.fitting = req
		if err := r.compact(ctx, step, "auto", before, c.window); err != nil {
			return req, err
		}
		req.Messages, req.Checked = r.history, 0
	}
	after, err := r.size(req)
	if err != nil {
		return req, err
	}
	if after > c.window {
		return req, r.windowError(after, c.window)
	}
	return req, nil
}

// tooLong names the window in a provider's "context too long" error
// that compaction could not help.
func (r *runner) tooLong(err error) error {
	if !providers.IsContextTooLong(err) {
		return err
	}
	window := "unknown to ask (give --context-window)"
	if r.comp.window > 0 {
		window = fmt.Sprintf("%d tokens", r.comp.window)
	}
	how := "even compacted"
	if r.comp.off {
		how = "with --compact off"
	}
	return fault.New(fault.Provider, fmt.Errorf("%w (window %s), %s: %w", ErrContextWindow, window, how, err))
}

func (r *runner) windowError(need, window int) error {
	how := "even compacted"
	if r.comp.off {
		how = "with --compact off"
	}
	return fault.New(fault.Provider, fmt.Errorf("%w: the next request needs about %d tokens, over the window of %d tokens (--context-window), %s",
		ErrContextWindow, need, window, how))
}

// overflow handles a provider's "context too long" answer to req: it
// compacts as if the window were what the request held, at most once a
// step, and returns the request to retry; ok is false when it cannot.
func (r *runner) overflow(ctx context.Context, step int, req providers.Request, err error) (providers.Request, bool, error) {
	c := &r.comp
	if c.off || !providers.IsContextTooLong(err) {
		return req, false, nil
	}
	before, serr := r.size(req)
	if serr != nil {
		return req, false, serr
	}
	// The provider's window is smaller than ask thought (or unknown): the
	// error may name it, else what failed bounds it. Later steps compact
	// under it before they are refused.
	var apiErr *providers.APIError
	errors.As(err, &apiErr)
	window := apiErr.ContextWindow()
	if window <= 0 || window >= before {
		window = before - 1
	}
	if c.window <= 0 || window < c.window {
		c.window = window
	}
	c.fitting = req
	if cerr := r.compact(ctx, step, "overflow", before, window); cerr != nil {
		return req, false, cerr
	}
	req.Messages, req.Checked = r.history, 0
	after, serr := r.size(req)
	if serr != nil {
		return req, false, serr
	}
	if after >= before {
		return req, false, fmt.Errorf("%w: compacting did not make the request smaller (about %d tokens): %w", ErrContextWindow, before, err)
	}
	return req, true, nil
}

// compact prunes, then summarises, until the request is under the
// threshold of window or nothing more can go; never making it larger.
func (r *runner) compact(ctx context.Context, step int, trigger string, before, window int) error {
	note := records.Compaction{Trigger: trigger, BeforeTokens: before, Window: window}
	r.progress(Progress{Step: step, MaxSteps: r.cfg.MaxSteps, Compacting: true})
	if r.cfg.OnCompact != nil {
		r.cfg.OnCompact(ctx, CompactNote{Compaction: note})
	}
	target := window * max(r.comp.at, 1) / 100
	now := before
	// The last keepSteps stay whole; only when the request would not fit
	// the window at all does the last one alone stay.
	for _, keep := range []int{keepSteps, 1} {
		if keep < keepSteps && now <= window {
			break
		}
		note.Pruned += r.prune(keep)
		var err error
		if now, err = r.size(r.plainRequest(r.history)); err != nil {
			return err
		}
		for round := 0; now > target && round < summaryRounds; round++ {
			n, usage, summary, err := r.summarise(ctx, step, window, keep)
			if err != nil {
				return err
			}
			if n == 0 {
				break
			}
			note.Summarised += n
			note.CacheRead += usage.CacheReadTokens
			note.SummaryTokens += usage.OutputTokens
			note.Summary = summary
			if now, err = r.size(r.plainRequest(r.history)); err != nil {
				return err
			}
		}
	}
	if now > window {
		var err error
		if note.Cut, now, err = r.cutResults(window, target, now); err != nil {
			return err
		}
	}
	note.AfterTokens = now
	r.res.Compactions = append(r.res.Compactions, note)
	r.emit(records.Event{Type: records.TypeContextCompacted, Step: step, Compaction: &note})
	if r.cfg.OnCompact != nil {
		r.cfg.OnCompact(ctx, CompactNote{Done: true, Compaction: note})
	}
	return nil
}

// plainRequest is the request being fitted over msgs, for estimates.
func (r *runner) plainRequest(msgs []json.RawMessage) providers.Request {
	req := r.comp.fitting
	req.Messages, req.Checked = msgs, 0
	return req
}

// prune replaces the results of every step but the last keep by stubs
// that name the call and its step, and returns how many it replaced. A
// result shorter than its stub stays.
func (r *runner) prune(keep int) int {
	c := &r.comp
	n := 0
	for i := 0; i < len(c.spans)-keep; i++ {
		s := &c.spans[i]
		if s.pruned || s.resultsEnd == 0 {
			continue
		}
		s.pruned = true
		stubs := make([]providers.ToolResult, len(s.results))
		changed := 0
		for j, res := range s.results {
			stubs[j] = res
			stub := Stub(s.whole()[j], s.step)
			if len(stub) < len(res.Content) {
				stubs[j].Content = stub
				changed++
			}
		}
		if changed == 0 {
			continue
		}
		msgs, err := r.protocol().FormatToolResults(stubs)
		if err != nil || size(msgs) >= size(r.history[s.resultsAt:s.resultsEnd]) {
			continue
		}
		r.splice(s.resultsAt, s.resultsEnd, msgs, i)
		s.results = stubs
		n += changed
	}
	return n
}

// cutResults is compaction's last resort, when the one step it keeps
// whole does not fit the window: the largest result not yet a stub (by
// then, that step's) is cut to its head and tail (Cut), from what the
// tool gave, until the request is under target or no result can be cut
// more. It returns how many results it cut and the request's size after.
func (r *runner) cutResults(window, target, now int) (int, int, error) {
	c := &r.comp
	cut := map[[2]int]bool{}
	for now > target {
		si, ri, longest := -1, -1, 0
		for i := range c.spans {
			for j, res := range c.spans[i].whole() {
				if n := len(res.Content); n > longest && len(c.spans[i].results[j].Content) > cutKeep+len(cutNote) {
					si, ri, longest = i, j, n
				}
			}
		}
		if si < 0 {
			break
		}
		s := &c.spans[si]
		had := len(s.results[ri].Content)
		results := slices.Clone(s.results)
		keep := max(had-(now-target)*bytesPerDroppedToken-len(cutNote), cutKeep)
		results[ri].Content = Cut(s.whole()[ri].Content, keep, window)
		if len(results[ri].Content) >= had {
			break
		}
		msgs, err := r.protocol().FormatToolResults(results)
		if err != nil {
			return len(cut), now, err
		}
		if size(msgs) >= size(r.history[s.resultsAt:s.resultsEnd]) {
			break
		}
		if s.uncut == nil {
			s.uncut = s.results
		}
		r.splice(s.resultsAt, s.resultsEnd, msgs, si)
		s.results = results
		cut[[2]int{s.step, ri}] = true
		if now, err = r.size(r.plainRequest(r.history)); err != nil {
			return len(cut), now, err
		}
	}
	return len(cut), now, nil
}

// whole are the span's results as the tools gave them.
func (s *span) whole() []providers.ToolResult {
	if s.uncut != nil {
		return s.uncut
	}
	return s.results
}

// cutNote is the line that stands where Cut left bytes out.
const cutNote = "\n[ask cut %d of this result's %d bytes here to fit the model's %d-token context window; the run's transcript keeps it whole. To see them, narrow the command or read a part.]\n"

// Cut shortens content to about keep bytes: its head and its tail, each
// ending at a line break where one is near, never inside a character,
// and between them a line saying how much was left out and where it is
// whole. Content no longer than keep stays as it is.
func Cut(content string, keep, window int) string {
	if keep >= len(content) {
		return content
	}
	headEnd := keep / 2
	if i := strings.LastIndexByte(content[:headEnd], '\n'); i >= headEnd/2 {
		headEnd = i + 1
	}
	for headEnd > 0 && !utf8.RuneStart(content[headEnd]) {
		headEnd--
	}
	tailStart := len(content) - (keep - headEnd)
	if i := strings.IndexByte(content[tailStart:], '\n'); i >= 0 && i < (len(content)-tailStart)/2 {
		tailStart += i + 1
	}
	for tailStart < len(content) && !utf8.RuneStart(content[tailStart]) {
		tailStart++
	}
	return content[:headEnd] + fmt.Sprintf(cutNote, tailStart-headEnd, len(content), window) + content[tailStart:]
}

// Stub is the one line that stands for a pruned tool result.
func Stub(res providers.ToolResult, step int) string {
	what := "result"
	if res.IsError {
		what = "error result"
	}
	return fmt.Sprintf("[pruned to fit the context window: the %s of %s (call %s, step %d, %d bytes); the run's transcript keeps it]",
		what, res.Name, res.ID, step, len(res.Content))
}

// splice replaces history[from:to] by msgs; span i holds them, and the
// spans after it move.
func (r *runner) splice(from, to int, msgs []json.RawMessage, i int) {
	tail := append([]json.RawMessage(nil), r.history[to:]...)
	r.history = append(append(r.history[:from:from], msgs...), tail...)
	d := len(msgs) - (to - from)
	s := &r.comp.spans[i]
	s.resultsEnd += d
	for k := i + 1; k < len(r.comp.spans); k++ {
		r.comp.spans[k].shift(d)
	}
	r.checked = 0
}

// summarise replaces the oldest steps (all but the last keep, or as many
// as one request can hold) by a summary the model writes in one
// request that keeps the conversation's prefix. It returns how many steps
// it replaced, 0 when none could be.
func (r *runner) summarise(ctx context.Context, step, window, keep int) (int, providers.Usage, string, error) {
	c := &r.comp
	limit := max(window/10, 256)
	// The latest cut whose request fits the window with its answer.
	cut := 0
	for j := len(c.spans) - min(keep, len(c.spans)); j > 0; j-- {
		req := r.summaryRequest(c.spans[j].start, limit)
		need, err := r.size(req)
		if err != nil {
			return 0, providers.Usage{}, "", err
		}
		if need+limit <= window {
			cut = j
			break
		}
	}
	if cut == 0 {
		return 0, providers.Usage{}, "", nil
	}
	first := c.spans[0].step
	if c.summarised {
		// An earlier summary stands first: the new one covers it.
		first = c.firstStep
	}
	last := c.spans[cut-1].step
	sent := c.sent
	turn, err := r.call(ctx, r.summaryRequest(c.spans[cut].start, limit), r.hooks(step))
	c.sent = sent
	if err != nil {
		return 0, providers.Usage{}, "", fmt.Errorf("summarise steps %d–%d: %w", first, last, err)
	}
	// Not learnt from: the estimates before and after a compaction
	// must count alike to be compared.
	r.res.Usage = r.res.Usage.Add(turn.Usage)
	text := strings.TrimSpace(turn.Text)
	if text == "" {
		return 0, turn.Usage, "", fmt.Errorf("summarise steps %d–%d: the model answered with no summary", first, last)
	}
	msg, err := r.protocol().UserMessage(fmt.Sprintf(summaryHeader, first, last) + text)
	if err != nil {
		return 0, turn.Usage, "", err
	}
	from, to := c.taskEnd, c.spans[cut].start
	shorter := slices.Concat(r.history[:from], []json.RawMessage{msg}, r.history[to:])
	was, err := r.size(r.plainRequest(r.history))
	if err != nil {
		return 0, turn.Usage, "", err
	}
	now, err := r.size(r.plainRequest(shorter))
	if err != nil {
		return 0, turn.Usage, "", err
	}
	if now >= was {
		// Never larger: a summary longer than what it stands for is
		// not used.
		return 0, turn.Usage, "", nil
	}
	r.history = shorter
	d := from + 1 - to
	c.spans = c.spans[cut:]
	for k := range c.spans {
		c.spans[k].shift(d)
	}
	r.checked = 0
	c.summarised = true
	return cut, turn.Usage, text, nil
}

// summaryRequest asks for a summary of history[:to]: the same system
// prompt, tools and conversation prefix as the steps' requests, so that
// the provider's prompt cache serves it, and the ask as a last user turn.
func (r *runner) summaryRequest(to, limit int) providers.Request {
	msgs := append([]json.RawMessage(nil), r.history[:to]...)
	if ask, err := r.protocol().UserMessage(SummaryPrompt); err == nil {
		msgs = append(msgs, ask)
	}
	return providers.Request{System: r.cfg.System, Messages: msgs, Tools: r.cfg.Tools, Stream: r.cfg.Stream,
		MaxTokens: limit, NoToolCalls: len(r.cfg.Tools) > 0, ContextWindow: r.comp.window}
}

func size(msgs []json.RawMessage) int {
	n := 0
	for _, m := range msgs {
		n += len(m)
	}
	return n
}
