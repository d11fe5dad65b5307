//go:build stack

package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	// The libraries ask is built on (DESIGN §1), each package of them ask
	// imports, for their package inits and the size they add: a process
	// pays for both before main.
	_ "github.com/go-git/go-git/v5/plumbing/format/gitignore"
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/landlock-lsm/go-landlock/landlock"
	_ "github.com/landlock-lsm/go-landlock/landlock/syscall"
	_ "github.com/mattn/go-isatty"
	_ "github.com/modelcontextprotocol/go-sdk/auth"
	_ "github.com/modelcontextprotocol/go-sdk/auth/extauth"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/modelcontextprotocol/go-sdk/oauthex"
	_ "github.com/tidwall/gjson"
	_ "github.com/tidwall/sjson"
	_ "go.opentelemetry.io/otel/attribute"
	_ "go.opentelemetry.io/otel/propagation"
	_ "go.opentelemetry.io/otel/trace"
	_ "mvdan.cc/sh/v3/syntax"
)

// parseArgs installs the signal handlers ask installs and reads the flags
// with urfave/cli, as ask does; `--version` alone is answered before
// either, as ask answers it.
func parseArgs() options {
	var opt options
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		opt.version = true
		return opt
	}
	// What ask catches: SIGINT, SIGTERM and SIGHUP to stop a run, SIGPIPE
	// to see a closed stdout as EPIPE.
	signal.Notify(make(chan os.Signal, 2), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	app := &cli.App{
		// main prints the version, as without the tag.
		Name: "floor", HideVersion: true, HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "base-url", Usage: "Chat Completions base URL", Destination: &opt.base},
			&cli.StringFlag{Name: "model", Usage: "model", Destination: &opt.model},
			&cli.IntFlag{Name: "max-steps", Value: 10, Usage: "most requests", Destination: &opt.steps},
			&cli.StringFlag{Name: "workdir", Value: ".", Usage: "where tools run", Destination: &opt.workdir},
			&cli.StringFlag{Name: "provider", Usage: "ignored: always Chat Completions"},
			&cli.BoolFlag{Name: "yes", Usage: "ignored: every call runs"},
			&cli.BoolFlag{Name: "quiet", Usage: "ignored: only the answer is printed"},
			&cli.BoolFlag{Name: "version", Usage: "print the version", Destination: &opt.version},
		},
		Action: func(c *cli.Context) error {
			opt.prompt = strings.Join(c.Args().Slice(), " ")
			return nil
		},
	}
	if err := app.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(2)
	}
	return opt
}
