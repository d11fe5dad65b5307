package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/batchrun"
	"github.com/ask-cli/ask/internal/run"
)

// batchCommand is `ask batch`: many runs from a file of tasks (DESIGN §8).
func batchCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "batch",
		Usage:     "run many tasks: JSON lines in, one result line per task out",
		UsageText: "ask batch [-j N] [--output FILE [--retry-failed]] [--shard I/N|auto/N] [--rate N/s] [--batch-api [--no-wait]] [flags] [FILE]\n   ask batch --resume [ID] [--no-wait]",
		Description: `Reads tasks as JSON lines from FILE (or stdin): {"id": "...", "prompt": "..."}
and any run setting by its flag name ("model", "max-steps", "workdir",
"schema", "timeout", ...), which lies over the command line's flags for
that task alone. Up to -j tasks run at once; each ends in one result line,
written as it ends:
{"id", "run_id", "status", "exit_code", "answer", "value", "usage", "cost",
"duration_ms", "error"}. A line that cannot be run is a result line with
status "invalid", its error and its line number; the batch goes on.
Every run is kept in the history (ask log show RUN_ID).

With --output FILE the results are appended there, one write per line,
synced; a rerun with the same file skips the tasks it holds, so a batch
killed at any moment loses only the runs under way. A 429 or 529 slows
every worker at once, honouring Retry-After. --shard I/N takes only the
tasks whose id hashes to shard I of N, to split one file across machines;
--shard auto/N takes I from the engine that started ask (Kubernetes
JOB_COMPLETION_INDEX, Slurm SLURM_ARRAY_TASK_ID, AWS_BATCH_JOB_ARRAY_INDEX,
CLOUD_RUN_TASK_INDEX). FILE.state pins the result file to its task file
and shard: another is refused. FILE.lock lets one ask batch at a time
write it. --retry-failed runs again the tasks that did not answer, and
rewrites FILE with one line a task. A task line refused before runs once
it reads. --rate N/s paces this process's requests; divide a provider's
limit by the number of shards.
On a terminal a progress line on stderr. The exit code is 0 when every
task answered, else the highest task's.

--batch-api sends each round of requests through the provider's batch
interface; --no-wait leaves the round pending: each waiting task gets a
"pending" line (exit 0) and stderr says how to go on. ask batch --resume
[ID] (the newest pending batch without one, kept under
$XDG_STATE_HOME/ask/batches, which another machine may share) reads the
batch's replies and carries each run on; with --no-wait it says so and
stops if the batch is still in progress. An id's lines are zero or more
"pending" lines, then its one final line: read the last. A rerun without
--resume runs a task whose only line is "pending" again.`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 4, Usage: "run up to `N` tasks at once"},
			&cli.StringFlag{Name: "output", Usage: "append the results to `FILE` (not stdout) and skip the tasks it already holds"},
			&cli.StringFlag{Name: "shard", Usage: "run only the tasks whose id hashes to shard `I/N` (0 ≤ I < N); auto/N takes I from JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID, AWS_BATCH_JOB_ARRAY_INDEX or CLOUD_RUN_TASK_INDEX"},
			&cli.BoolFlag{Name: "retry-failed", Usage: "with --output: run again the tasks whose result did not answer, keeping one line a task"},
			&cli.StringFlag{Name: "rate", Usage: "send at most `N/s` (or N/m) model requests from this process, shared by its workers"},
			&cli.BoolFlag{Name: "batch-api", Usage: "send each round of model requests of all tasks as one batch of the provider's batch interface (OpenAI, Anthropic, Gemini: half price; -j defaults to 1000)"},
			&cli.BoolFlag{Name: "no-wait", Usage: "with --batch-api or --resume: leave a submitted round pending, and exit 0"},
			&cli.BoolFlag{Name: "resume", Usage: "carry on the pending batch named by the argument `[ID]`, or the newest"},
		},
		Action: func(c *cli.Context) error { return batchAction(c, stdio) },
	}
}

func batchAction(c *cli.Context, stdio *IO) error {
	if err := checkQuietVerbose(c); err != nil {
		return err
	}
	if c.NArg() > 1 {
		return usageErr("batch takes one task file, got %d words (%q…)", c.NArg(), c.Args().Get(1))
	}
	resuming := c.Bool("resume")
	if c.Bool("retry-failed") && c.String("output") == "" {
		return usageErr("--retry-failed runs again the failed tasks of a result file: give --output FILE")
	}
	if c.Bool("no-wait") && !c.Bool("batch-api") && !resuming {
		return usageErr("--no-wait leaves a batch of the provider's batch interface pending: give --batch-api too")
	}
	j := c.Int("jobs")
	if c.Bool("batch-api") && !c.IsSet("jobs") {
		j = 1000 // a round holds a request of every task under way
	}
	flags, err := flagSettings(c, stdio)
	if err != nil {
		return err
	}
	cfg := batchrun.Config{
		// The command line's settings are checked once, before any task.
		Flags: flags,
		Resolve: func(flags run.Settings) (run.Settings, error) {
			return run.Resolve(run.Inputs{Flags: flags, Getenv: stdio.Getenv, Config: stdio.config, Wd: stdio.Wd})
		},
		Env: runEnv(c, stdio, statusFor(stdio, true)), Getenv: stdio.Getenv, Secrets: stdio.redactor.Add,
		J: j, JSet: c.IsSet("jobs"), Shard: c.String("shard"), Output: c.String("output"), Out: stdio.Out,
		RetryFailed: c.Bool("retry-failed"), Rate: c.String("rate"), TasksName: "-",
		BatchAPI: c.Bool("batch-api"), NoWait: c.Bool("no-wait"), Resuming: resuming,
		Err: stdio.Err, Progress: stdio.ErrTTY, Quiet: c.Bool("quiet"), Version: versionString(),
	}
	if resuming {
		cfg.Resume = c.Args().First()
	} else {
		var in io.Reader = stdio.In
		if name := c.Args().First(); name != "" && name != "-" {
			f, err := os.Open(name)
			if err != nil {
				return usageErr("the task file: %v", err)
			}
			defer f.Close()
			in, cfg.TasksName = f, name
		} else if stdio.InTTY || stdio.In == nil {
			return usageErr("no tasks: give a task file (ask batch tasks.jsonl) or pipe the tasks in")
		}
		cfg.Input = in
	}
	sum, err := batchrun.Run(c.Context, cfg)
	if stopped := context.Cause(c.Context); stopped != nil {
		return withCode(interruptCode(stopped), fmt.Errorf("batch stopped: %d results written; run it again with the same --output to go on", sum.Results))
	}
	if err != nil {
		return err // its kind says its code: a usage error 2, a missing key 4, else 1
	}
	if sum.Code != exitOK {
		return &silentError{code: sum.Code}
	}
	return nil
}
