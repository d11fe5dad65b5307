package tools

import (
	"context"
	"time"
)

// RunCheck runs a command line of the user's (--until's check) as the
// shell tool runs the model's: by /bin/sh in the working directory, in the
// root's sandbox, with the tools' environment, until it ends or ctx does.
// It returns the exit code (-1 when killed) and the output as the shell
// tool reports it; an error means it could not run (the sandbox refused).
func (r *Root) RunCheck(ctx context.Context, command string) (code int, output string, err error) {
	limit := 24 * time.Hour // ctx, bounded by --timeout, is the real limit
	if d, ok := ctx.Deadline(); ok {
		limit = time.Until(d)
	}
	res, err := runShell(ctx, r, command, nil, limit)
	if err != nil {
		return -1, "", err
	}
	code = res.exitCode
	if code == 0 && res.failed() {
		code = -1
	}
	return code, res.String(), nil
}
