package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/mcpserve"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/table"
	"github.com/ask-cli/ask/internal/termtext"
)

func mcpCommand(stdio *IO) *cli.Command {
	flags := []cli.Flag{
		&cli.BoolFlag{Name: "tools", Usage: "start each enabled server and list its tools, or say why it failed"},
		&cli.BoolFlag{Name: "json", Usage: "print a JSON array of the servers"},
	}
	return &cli.Command{
		Name:            "mcp",
		Action:          subcommandAction,
		Usage:           "the MCP servers a run starts: the config file's mcpServers and --mcp",
		HideHelpCommand: true,
		Subcommands: []*cli.Command{{
			Name:  "list",
			Usage: "list the MCP servers (the config file's, disabled ones included, and those --mcp names), with --tools their tools",
			Description: "Values of env and headers are never shown, only their names. With --tools a server that\n" +
				"fails is listed with its error, and the exit code is 1 (4 when a server refused its credentials).",
			Flags:  flags,
			Action: func(c *cli.Context) error { return mcpList(c, stdio) },
		}, {
			Name:      "login",
			Usage:     "sign in to a remote MCP server with OAuth, and keep the sign-in for later runs",
			UsageText: "ask mcp login NAME|URL [--id-token-stdin]",
			Description: "NAME is a server of the config file's mcpServers, or give its URL. ask finds the server's\n" +
				"authorization server, registers itself there (or uses the entry's oauth client_id), and opens the\n" +
				"authorization URL with $BROWSER, else the system's opener; the URL is printed on stderr too.\n" +
				"The browser comes back to a port on 127.0.0.1. The tokens are kept in the state directory\n" +
				"(mode 0600) and refreshed by later runs; no run, tool, transcript or model ever sees them.\n" +
				"A run never opens a browser: a server that needs a sign-in is left out with a line naming\n" +
				"this command (exit 4 when --mcp named it). A server that asks for more scopes mid-run fails\n" +
				"that call with the same line; the scopes are kept, and the next login asks for them too.\n\n" +
				"Enterprise-managed authorization (cross-app access): with idp_issuer, idp_client_id (and\n" +
				"idp_client_secret, as a ${VAR}) beside client_id and client_secret in the entry's oauth, you sign\n" +
				"in at your organization's identity provider instead, in the browser; its ID token is exchanged\n" +
				"there for a grant to this one server (an ID-JAG), which the server's authorization server turns\n" +
				"into its token. The ID token is kept too (mode 0600), so later runs get new tokens, and more\n" +
				"scopes when a server asks for them, without you.\n" +
				"--id-token-stdin takes an ID token you already have (from the provider's own tool) instead of\n" +
				"opening the browser.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "id-token-stdin", Usage: "read the identity provider's ID token from stdin instead of signing in there in the browser (a server whose oauth names idp_issuer)"},
			},
			Action: func(c *cli.Context) error { return mcpLogin(c, stdio) },
		}, {
			Name:      "serve",
			Usage:     "be an MCP server: other agents and editors hand tasks to ask through its tools ask and ask_reply",
			UsageText: "ask [run flags] mcp serve [--listen 127.0.0.1:PORT]",
			Description: "Serves over stdio (the client starts ask mcp serve), or over streamable HTTP at a loopback\n" +
				"address with --listen. The tool ask runs a task ({\"prompt\", \"mode\"?, \"workdir\"?}) and answers;\n" +
				"ask_reply ({\"run_id\", \"prompt\"}) carries a kept run on. Progress is notified as a run works,\n" +
				"and notifications/cancelled stops it. The run flags are every run's policy: a client's mode\n" +
				"and workdir only narrow them. Nobody is asked to approve: a call that needs approval runs\n" +
				"only where the flags, rules or hooks allow it (--accept-edits, --allow-tool, --yes), and is\n" +
				"denied otherwise. Every run is kept (ask log).",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "listen", Usage: "serve streamable HTTP at the loopback `ADDRESS` (127.0.0.1:PORT) instead of stdio"},
			},
			Action: func(c *cli.Context) error { return mcpServe(c, stdio) },
		}, {
			Name:      "logout",
			Usage:     "forget the sign-in kept for a remote MCP server",
			UsageText: "ask mcp logout NAME|URL",
			Action:    func(c *cli.Context) error { return mcpLogout(c, stdio) },
		}},
	}
}

// maxIDToken bounds the ID token --id-token-stdin reads.
const maxIDToken = 64 << 10

func mcpLogin(c *cli.Context, stdio *IO) error {
	if c.NArg() != 1 {
		return usageErr("mcp login takes one server: a name from the config file's mcpServers, or its URL")
	}
	if _, err := resolve(c, stdio); err != nil { // reads the config file, and says what is wrong with it
		return err
	}
	var idToken string
	if c.Bool("id-token-stdin") {
		if stdio.InTTY {
			return usageErr("--id-token-stdin reads the ID token from stdin: pipe it in (ask mcp login NAME --id-token-stdin < FILE)")
		}
		data, err := io.ReadAll(io.LimitReader(stdio.In, maxIDToken+1))
		if err != nil {
			return usageErr("reading the ID token from stdin: %v", err)
		}
		if idToken = strings.TrimSpace(string(data)); idToken == "" || len(data) > maxIDToken {
			return usageErr("--id-token-stdin: stdin holds no ID token (one JWT, under %d KiB)", maxIDToken>>10)
		}
		stdio.redactor.Add(idToken)
	}
	env := runEnv(c, stdio, statusFor(stdio, c.Bool("quiet")))
	g, err := run.MCPLogin(c.Context, stdio.config, env, c.Args().First(), idToken)
	if err != nil {
		return err
	}
	stdio.redactor.Add(g.Secrets()...)
	if !c.Bool("quiet") {
		fmt.Fprintf(stdio.Err, "signed in to %s; the sign-in is kept for later runs (ask mcp logout %s forgets it)\n",
			termtext.Safe(cmp.Or(g.Name, g.Server)), termtext.Safe(cmp.Or(g.Name, g.Server)))
	}
	return nil
}

func mcpServe(c *cli.Context, stdio *IO) error {
	if c.NArg() > 0 {
		return usageErr("mcp serve takes no arguments: a client sends the prompts")
	}
	listen := c.String("listen")
	if listen != "" {
		if err := mcpserve.CheckListen(listen); err != nil {
			return usageErr("%v", err)
		}
	}
	store, err := history.Open(stdio.Getenv)
	if err != nil {
		return usageErr("%v", err)
	}
	in, err := inputs(c, stdio)
	if err != nil {
		return err
	}
	env := runEnv(c, stdio, nil)
	env.Notes = stdio.Err
	srv := &mcpserve.Server{Inputs: in, Env: env, History: &store, Version: versionString(),
		Secrets: stdio.redactor.Add}
	mcpSrv, err := srv.New()
	if err != nil {
		return err
	}
	if listen != "" {
		return mcpserve.ServeHTTP(c.Context, mcpSrv, listen, func(a net.Addr) {
			fmt.Fprintf(stdio.Err, "ask mcp serve: listening on http://%s/ (for this user's processes only)\n", a)
		}, func(why string) {
			fmt.Fprintf(stdio.Err, "ask mcp serve: refused %s\n", why)
		})
	}
	return mcpserve.ServeStdio(c.Context, mcpSrv, stdio.In, stdio.Out)
}

func mcpLogout(c *cli.Context, stdio *IO) error {
	if c.NArg() != 1 {
		return usageErr("mcp logout takes one server: a name from the config file's mcpServers, or its URL")
	}
	if _, err := resolve(c, stdio); err != nil {
		return err
	}
	label, had, err := run.MCPLogout(stdio.config, runEnv(c, stdio, statusFor(stdio, c.Bool("quiet"))), c.Args().First())
	if err != nil {
		return err
	}
	if !c.Bool("quiet") {
		if had {
			fmt.Fprintf(stdio.Err, "forgot the sign-in for %s\n", termtext.Safe(label))
		} else {
			fmt.Fprintf(stdio.Err, "no sign-in was kept for %s\n", termtext.Safe(label))
		}
	}
	return nil
}

func mcpList(c *cli.Context, stdio *IO) error {
	if c.NArg() > 0 {
		return usageErr("mcp list takes no arguments")
	}
	s, err := resolve(c, stdio)
	if err != nil {
		return err
	}
	env := runEnv(c, stdio, statusFor(stdio, c.Bool("quiet")))
	entries, err := run.ListMCP(c.Context, s, stdio.config, env, c.Bool("tools"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		out, err := json.Marshal(nonNil(entries))
		if err != nil {
			return err
		}
		if err := writeStageJSON(stdio, out); err != nil {
			return err
		}
	} else if err := table.MCP(stdio.Out, entries); err != nil {
		return err
	}
	return run.MCPFailures(entries)
}
