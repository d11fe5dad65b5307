package trace

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// Batch is the trace of an `ask batch`: one trace, a span for the batch,
// and one per task, under which the task's run puts its own span (the run
// finds the task's span in the context it is given). A nil *Batch does
// nothing, which is what StartBatch returns when the environment does not
// ask for traces. Its methods are safe for concurrent use.
//
// Use:
//
//	ctx, b := trace.StartBatch(ctx, trace.Options{Getenv: getenv, Version: version})
//	defer b.End()
//	for each task, in any goroutine:
//		tctx, task := b.StartTask(ctx, task.ID)
//		res := r.Execute(tctx, prompt, out) // the run's span is the task's child
//		task.End(res.Status, res.ExitCode)
//	and at exit, trace.FlushAtExit() (the CLI's exit does it).
type Batch struct {
	exp  *exporter
	cfg  config
	span *span
	mu   sync.Mutex
}

// Task is one task's span.
type Task struct {
	b    *Batch
	span *span
}

// StartBatch starts the batch's span, under TRACEPARENT when that is set,
// and returns ctx carrying it.
func StartBatch(ctx context.Context, o Options) (context.Context, *Batch) {
	r, err := StartRun(ctx, o)
	if r == nil || err != nil {
		return ctx, nil
	}
	b := &Batch{exp: r.exp, cfg: r.cfg, span: r.root}
	b.span.name = "ask batch"
	b.span.set(attribute.String(keyAgentName, "ask"))
	return oteltrace.ContextWithSpanContext(ctx, b.span.ctx), b
}

// StartTask starts the span of task id and returns ctx carrying it, for
// the task's run.
func (b *Batch) StartTask(ctx context.Context, id string) (context.Context, *Task) {
	if b == nil {
		return ctx, nil
	}
	s := b.span.child(b.cfg, "ask batch task", kindInternal, time.Now())
	s.set(attribute.String(keyTaskID, clip(id, b.cfg.valueLimit)))
	return oteltrace.ContextWithSpanContext(ctx, s.ctx), &Task{b: b, span: s}
}

// End ends the task's span with its result line's status and exit code.
func (t *Task) End(status string, exitCode int) {
	if t == nil {
		return
	}
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	t.span.set(attribute.String(keyTaskStatus, status), attribute.Int(keyRunExitCode, exitCode))
	if exitCode != 0 {
		t.span.fail(status, "the task ended "+status)
	}
	t.b.endLocked(t.span)
}

// End ends the batch's span.
func (b *Batch) End() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.endLocked(b.span)
}

func (b *Batch) endLocked(s *span) {
	if !s.end.IsZero() {
		return
	}
	s.end = time.Now()
	if s.ctx.IsSampled() {
		b.exp.add(s)
	}
}
