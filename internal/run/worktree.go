package run

import (
	"context"
	"errors"
	"sync"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/worktree"
)

// runWorktree is the git worktree a run works in (--worktree): made by
// New, and at the end kept when the run changed it, else removed with its
// branch.
type runWorktree struct {
	wt      *worktree.Worktree
	settled sync.Once
	kept    *records.Worktree
}

// useWorktree makes the run's worktree when --worktree asks for one, and
// returns the directory the run works in: the same place in the worktree
// as dir is in its checkout, or dir itself without one. A run that sends
// nothing (ask provider request, ask tools) or replays makes none.
func (r *Run) useWorktree(ctx context.Context, dir string) (string, error) {
	s := r.Settings
	if s.Worktree.Value == "" {
		if s.WorktreeBase.Value != "" {
			return "", fault.Usagef("--worktree-base %s: it says where --worktree starts from: give --worktree too", s.WorktreeBase.Value)
		}
		return dir, nil
	}
	if r.env.Offline || r.env.Replay != nil {
		return dir, nil
	}
	wt, err := worktree.Create(ctx, dir, s.Worktree.Value, s.WorktreeBase.Value)
	if errors.Is(err, worktree.ErrUsage) {
		return "", fault.Usagef("--%v", err)
	}
	if err != nil {
		return "", err
	}
	r.worktree = &runWorktree{wt: wt}
	// A run that never finishes (its building failed, or it was never
	// executed) leaves nothing behind it did not change.
	r.closers = append(r.closers, func() { r.settleWorktree(context.Background(), "") })
	return wt.Workdir, nil
}

// settleWorktree decides, once, what becomes of the run's worktree: kept
// when the run changed it or waits to be resumed in it, else removed with
// its branch. It returns the worktree kept, nil for none.
func (r *Run) settleWorktree(ctx context.Context, status string) *records.Worktree {
	w := r.worktree
	if w == nil {
		return nil
	}
	w.settled.Do(func() {
		ctx := context.WithoutCancel(ctx)
		changed, err := w.wt.Changed(ctx)
		if err != nil {
			r.note("warning: keeping the worktree %s: cannot tell whether the run changed it: %v", w.wt.Path, err)
		}
		if err != nil || changed || status == loop.StatusDeferred {
			w.kept = &records.Worktree{Path: w.wt.Path, Branch: w.wt.Branch, Base: w.wt.Base}
			return
		}
		if err := w.wt.Remove(ctx); err != nil {
			r.note("warning: %v", err)
		}
	})
	return w.kept
}
