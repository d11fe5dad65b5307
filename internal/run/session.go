package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/providers"
)

// An editor's session (ask acp) is one kept run: its id is chosen when the
// session starts, and each prompt of the session is a turn whose events are
// appended to the run's transcript, after the turns before it. The
// conversation a turn carries on is the last turn's (its run.finished
// history), so a session is carried on from its transcript alone, in this
// process or another.

// sessionTurn is a turn of the session id; prior is its transcript so far,
// nil for its first turn.
type sessionTurn struct {
	id    string
	prior []byte
}

// NewSessionID is the id of a session that starts now: the run id its
// turns are kept under.
func NewSessionID() string { return history.NewID(time.Now()) }

// SessionTranscript is the kept transcript of session id, or nil with no
// error for a session that has had no turn yet (or keeps nothing).
func SessionTranscript(store *history.Store, id string) ([]byte, error) {
	if store == nil || store.Dir == "" {
		return nil, nil
	}
	if !history.IsID(id) {
		return nil, fmt.Errorf("%q is not a session id (a run id such as 20261123-100000.000000-1a2b)", id)
	}
	data, err := os.ReadFile(store.Path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// Turn runs prompt as the next turn of session id: the conversation so
// far is read from the session's kept transcript, and the turn is appended
// to it. images go with the prompt, after -a's files. Turns of one session run one at a time.
func (r *Run) Turn(ctx context.Context, id, prompt string, images []providers.Attachment, out Output) *Result {
	if len(images) > 0 {
		flags := r.attachments
		r.attachments = append(slices.Clip(flags), images...)
		defer func() { r.attachments = flags }()
	}
	prior, err := SessionTranscript(out.History, id)
	if err != nil {
		r.note("warning: session %s starts afresh: %v", id, err)
		prior = nil
	}
	r.Settings.Conversation = nil
	if prior != nil {
		conv, err := ParseConversation(prior)
		if err != nil {
			r.note("warning: session %s starts afresh: %v", id, err)
			prior = nil
		} else {
			r.Settings.Conversation = &Conversation{Source: "session " + id, Provider: conv.Provider, History: conv.History}
		}
	}
	return r.execute(ctx, prompt, out, nil, &sessionTurn{id: id, prior: prior})
}
