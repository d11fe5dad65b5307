package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/providers/catalog"
)

// Completion scripts are generated from the app's own commands and flags,
// so they never fall behind. bash and zsh get static scripts (urfave/cli's
// own call the binary back at every <Tab>); fish gets urfave/cli's
// generator plus the values the flags accept.

var completionShells = []string{"bash", "zsh", "fish"}

func completionCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh or fish",
		UsageText: "ask completion bash|zsh|fish",
		Description: `Load the script in the current shell, or install it for every new one:

  bash:  source <(ask completion bash)
         ask completion bash > ~/.local/share/bash-completion/completions/ask
  zsh:   source <(ask completion zsh)
         ask completion zsh > "${fpath[1]}/_ask"
  fish:  ask completion fish > ~/.config/fish/completions/ask.fish`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("completion takes one shell: bash, zsh or fish")
			}
			// A fresh app: the running one has been set up by urfave/cli,
			// which adds help commands and flags to some commands only.
			script, err := completionScript(newApp(stdio), c.Args().First())
			if err != nil {
				return err
			}
			_, err = io.WriteString(stdio.Out, script)
			return err
		},
	}
}

func completionScript(app *cli.App, shell string) (string, error) {
	tree := commandTree(app)
	switch shell {
	case "bash":
		return bashCompletion(app.Name, tree), nil
	case "zsh":
		return zshCompletion(app.Name, tree), nil
	case "fish":
		return fishCompletion(app, tree)
	}
	return "", usageErr("completion: unknown shell %q: choose bash, zsh or fish", shell)
}

// compNode is a command with its flags: the app itself at the root.
type compNode struct {
	path  []string // command names from the root
	usage string
	flags []cli.Flag
	subs  []*compNode
	args  []string // fixed values of the positional argument
}

// commandTree reads an app that has not run: its flags and commands as
// declared, with the help and version flags urfave/cli adds when it runs.
func commandTree(app *cli.App) *compNode {
	root := &compNode{flags: app.VisibleFlags()}
	if !app.HideHelp {
		root.flags = append(root.flags, cli.HelpFlag)
	}
	if !app.HideVersion {
		root.flags = append(root.flags, cli.VersionFlag)
	}
	for _, c := range app.VisibleCommands() {
		if c.Name != "help" {
			root.subs = append(root.subs, commandNode(c, nil))
		}
	}
	return root
}

func commandNode(c *cli.Command, parent []string) *compNode {
	n := &compNode{path: append(append([]string{}, parent...), c.Name), usage: c.Usage, flags: c.VisibleFlags()}
	if !c.HideHelp {
		n.flags = append(n.flags, cli.HelpFlag)
	}
	if c.Name == "completion" {
		n.args = completionShells
	}
	for _, sub := range c.VisibleCommands() {
		if sub.Name != "help" {
			n.subs = append(n.subs, commandNode(sub, n.path))
		}
	}
	return n
}

// all lists the node and its descendants, depth first.
func (n *compNode) all() []*compNode {
	out := []*compNode{n}
	for _, s := range n.subs {
		out = append(out, s.all()...)
	}
	return out
}

// valueKind says what a flag's value is: fixed words, a file, a directory,
// or anything ("").
func valueKind(f cli.Flag) (words []string, kind string) {
	switch f.Names()[0] {
	case "provider":
		return catalog.Names(), "words"
	case "mode":
		return config.Modes, "words"
	case "tool-protocol":
		return config.ToolProtocols, "words"
	case "color":
		return config.Colors, "words"
	case "workdir":
		return nil, "dir"
	}
	if df, ok := f.(cli.DocGenerationFlag); ok {
		switch placeholderOf(df.GetUsage()) {
		case "FILE":
			return nil, "file"
		case "DIR":
			return nil, "dir"
		}
	}
	return nil, ""
}

// placeholderOf is the `NAME` a flag's usage quotes for its value, as
// urfave/cli shows it in help.
func placeholderOf(usage string) string {
	_, rest, ok := strings.Cut(usage, "`")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, "`")
	if !ok {
		return ""
	}
	return name
}

func takesValue(f cli.Flag) bool {
	df, ok := f.(cli.DocGenerationFlag)
	return ok && df.TakesValue()
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// shortUsage is a flag's usage for a completion menu: without urfave/cli's
// placeholder quotes and "(default: ...)", on one short line.
func shortUsage(usage string) string {
	usage = strings.ReplaceAll(usage, "`", "")
	if i := strings.Index(usage, " (default"); i > 0 {
		if j := strings.Index(usage[i:], ")"); j > 0 {
			usage = usage[:i] + usage[i+j+1:]
		}
	}
	return shorten(usage, 80)
}

func bashCompletion(prog string, root *compNode) string {
	var b strings.Builder
	fn := "_" + strings.ReplaceAll(prog, "-", "_") + "_completion"
	fmt.Fprintf(&b, "# bash completion for %s, generated by `%s completion bash`.\n", prog, prog)
	fmt.Fprintf(&b, "# Load it with: source <(%s completion bash)\n\n", prog)
	fmt.Fprintf(&b, "%s() {\n", fn)
	b.WriteString("    local cur prev word path=\"\" seen_arg=\"\" i\n")
	b.WriteString("    cur=\"${COMP_WORDS[COMP_CWORD]}\"\n")
	b.WriteString("    prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n")

	// Walk the words typed so far to find the command they name; a word
	// that is neither a flag, a flag's value nor a command is an argument
	// (the prompt), after which no command can follow.
	var valueFlags, commandPaths []string
	seenValueFlag := map[string]bool{}
	for _, n := range root.all() {
		for _, f := range n.flags {
			if takesValue(f) {
				for _, name := range f.Names() {
					if d := dashed(name); !seenValueFlag[d] {
						seenValueFlag[d] = true
						valueFlags = append(valueFlags, d)
					}
				}
			}
		}
		for _, s := range n.subs {
			commandPaths = append(commandPaths, "\"/"+strings.Join(s.path, "/")+"\"")
		}
	}
	b.WriteString("    for ((i = 1; i < COMP_CWORD; i++)); do\n")
	b.WriteString("        word=\"${COMP_WORDS[i]}\"\n")
	if len(valueFlags) > 0 {
		fmt.Fprintf(&b, "        case \"${COMP_WORDS[i-1]}\" in %s) continue ;; esac\n", strings.Join(valueFlags, "|"))
	}
	b.WriteString("        [[ \"$word\" == -* || -n \"$seen_arg\" ]] && continue\n")
	b.WriteString("        case \"$path/$word\" in\n")
	if len(commandPaths) > 0 {
		fmt.Fprintf(&b, "            %s) path=\"$path/$word\" ;;\n", strings.Join(commandPaths, "|"))
	}
	b.WriteString("            *) seen_arg=1 ;;\n")
	b.WriteString("        esac\n")
	b.WriteString("    done\n\n")

	// A flag's value.
	b.WriteString("    case \"$prev\" in\n")
	byKind := map[string][]string{}
	words := map[string]string{}
	var wordFlags []string
	for _, n := range root.all() {
		for _, f := range n.flags {
			if !takesValue(f) {
				continue
			}
			var names []string
			for _, name := range f.Names() {
				names = append(names, dashed(name))
			}
			pattern := strings.Join(names, "|")
			w, kind := valueKind(f)
			if kind == "words" {
				if _, ok := words[pattern]; !ok {
					wordFlags = append(wordFlags, pattern)
				}
				words[pattern] = strings.Join(w, " ")
				continue
			}
			byKind[kind] = append(byKind[kind], pattern)
		}
	}
	for _, p := range wordFlags {
		fmt.Fprintf(&b, "        %s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return 0 ;;\n", p, words[p])
	}
	kinds := []struct{ kind, action string }{{"file", "COMPREPLY=($(compgen -f -- \"$cur\"))"}, {"dir", "COMPREPLY=($(compgen -d -- \"$cur\"))"}, {"", "COMPREPLY=()"}}
	for _, k := range kinds {
		if pats := dedupe(byKind[k.kind]); len(pats) > 0 {
			fmt.Fprintf(&b, "        %s) %s; return 0 ;;\n", strings.Join(pats, "|"), k.action)
		}
	}
	b.WriteString("    esac\n\n")

	// Flags, commands or fixed arguments of the command.
	b.WriteString("    local flags=\"\" words=\"\"\n")
	b.WriteString("    case \"$path\" in\n")
	for _, n := range root.all() {
		var flags, subs []string
		for _, f := range n.flags {
			for _, name := range f.Names() {
				flags = append(flags, dashed(name))
			}
		}
		for _, s := range n.subs {
			subs = append(subs, s.path[len(s.path)-1])
		}
		subs = append(subs, n.args...)
		fmt.Fprintf(&b, "        \"%s\") flags=\"%s\"; words=\"%s\" ;;\n", pathKey(n.path), strings.Join(flags, " "), strings.Join(subs, " "))
	}
	b.WriteString("    esac\n")
	b.WriteString("    if [[ \"$cur\" == -* ]]; then\n")
	b.WriteString("        COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n")
	b.WriteString("    elif [[ -z \"$seen_arg\" && -n \"$words\" ]]; then\n")
	b.WriteString("        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n")
	b.WriteString("    fi\n")
	b.WriteString("    return 0\n")
	b.WriteString("}\n\n")
	fmt.Fprintf(&b, "complete -o default -F %s %s\n", fn, prog)
	return b.String()
}

func pathKey(path []string) string {
	if len(path) == 0 {
		return ""
	}
	return "/" + strings.Join(path, "/")
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func zshCompletion(prog string, root *compNode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %s\n", prog)
	fmt.Fprintf(&b, "# zsh completion for %s, generated by `%s completion zsh`.\n", prog, prog)
	fmt.Fprintf(&b, "# Load it with: source <(%s completion zsh), or save it as _%s in a directory of $fpath.\n\n", prog, prog)
	for _, n := range root.all() {
		fn := zshFunc(prog, n.path)
		fmt.Fprintf(&b, "%s() {\n", fn)
		b.WriteString("  local curcontext=\"$curcontext\" state line ret=1\n")
		b.WriteString("  typeset -A opt_args\n")
		b.WriteString("  _arguments -C -s \\\n")
		for _, f := range n.flags {
			fmt.Fprintf(&b, "    %s \\\n", zshFlagSpec(f))
		}
		switch {
		case len(n.subs) > 0:
			b.WriteString("    '1: :->command' \\\n")
			b.WriteString("    '*:: :->rest' && ret=0\n")
			b.WriteString("  case $state in\n")
			b.WriteString("    command)\n")
			b.WriteString("      local -a commands\n")
			b.WriteString("      commands=(\n")
			for _, s := range n.subs {
				fmt.Fprintf(&b, "        %s\n", zshQuote(s.path[len(s.path)-1]+":"+zshEscape(s.usage)))
			}
			b.WriteString("      )\n")
			b.WriteString("      _describe -t commands command commands && ret=0 ;;\n")
			b.WriteString("    rest)\n")
			b.WriteString("      case $words[1] in\n")
			for _, s := range n.subs {
				fmt.Fprintf(&b, "        %s) %s && ret=0 ;;\n", s.path[len(s.path)-1], zshFunc(prog, s.path))
			}
			b.WriteString("        *) _files && ret=0 ;;\n")
			b.WriteString("      esac ;;\n")
			b.WriteString("  esac\n")
		case len(n.args) > 0:
			fmt.Fprintf(&b, "    '1:value:(%s)' && ret=0\n", strings.Join(n.args, " "))
		default:
			b.WriteString("    '*:file:_files' && ret=0\n")
		}
		b.WriteString("  return ret\n")
		b.WriteString("}\n\n")
	}
	// Autoloaded from $fpath, the file's body is the function; sourced, it
	// registers itself.
	fn := zshFunc(prog, nil)
	fmt.Fprintf(&b, "if [ \"$funcstack[1]\" = %q ]; then\n  %s \"$@\"\nelse\n  compdef %s %s\nfi\n", fn, fn, fn, prog)
	return b.String()
}

func zshFunc(prog string, path []string) string {
	return "_" + strings.ReplaceAll(strings.Join(append([]string{prog}, path...), "_"), "-", "_")
}

// zshFlagSpec is an _arguments spec: exclusive names, description, and the
// value's message and action.
func zshFlagSpec(f cli.Flag) string {
	var names []string
	for _, n := range f.Names() {
		names = append(names, dashed(n))
	}
	usage := ""
	if df, ok := f.(cli.DocGenerationFlag); ok {
		usage = df.GetUsage()
	}
	desc := "[" + zshEscape(shortUsage(usage)) + "]"
	value := ""
	if takesValue(f) {
		placeholder := placeholderOf(usage)
		msg := strings.ToLower(firstNonEmpty(placeholder, f.Names()[0]))
		words, kind := valueKind(f)
		switch kind {
		case "words":
			value = ":" + msg + ":(" + strings.Join(words, " ") + ")"
		case "file":
			value = ":" + msg + ":_files"
		case "dir":
			value = ":" + msg + ":_files -/"
		default:
			value = ":" + msg + ": "
		}
	}
	repeat := ""
	if _, ok := f.(*cli.StringSliceFlag); ok {
		repeat = "*"
	}
	if len(names) == 1 {
		return zshQuote(repeat + names[0] + desc + value)
	}
	exclusive := ""
	if repeat == "" {
		exclusive = zshQuote("(" + strings.Join(names, " ") + ")")
	} else {
		exclusive = zshQuote("*")
	}
	return exclusive + "{" + strings.Join(names, ",") + "}" + zshQuote(desc+value)
}

// zshEscape protects the characters _arguments and _describe treat
// specially in descriptions.
func zshEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`, `:`, `\:`)
	return r.Replace(s)
}

func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fishCompletion is urfave/cli's script with the values flags accept and
// the shells of `completion` added.
func fishCompletion(app *cli.App, root *compNode) (string, error) {
	script, err := app.ToFishCompletion()
	if err != nil {
		return "", fmt.Errorf("completion fish: %w", err)
	}
	var b strings.Builder
	b.WriteString(script)
	b.WriteString("\n# Values of flags and arguments.\n")
	for _, n := range root.all() {
		cond := fmt.Sprintf("__fish_%s_no_subcommand", app.Name)
		if len(n.path) > 0 {
			cond = "__fish_seen_subcommand_from " + n.path[len(n.path)-1]
		}
		for _, f := range n.flags {
			words, kind := valueKind(f)
			opt := ""
			for i, name := range f.Names() {
				if i == 0 || len(name) > 1 {
					opt += " -l " + name
				} else {
					opt += " -s " + name
				}
			}
			switch kind {
			case "words":
				fmt.Fprintf(&b, "complete -c %s -n '%s'%s -x -a '%s'\n", app.Name, cond, opt, strings.Join(words, " "))
			case "file":
				fmt.Fprintf(&b, "complete -c %s -n '%s'%s -r -F\n", app.Name, cond, opt)
			case "dir":
				fmt.Fprintf(&b, "complete -c %s -n '%s'%s -x -a '(__fish_complete_directories)'\n", app.Name, cond, opt)
			}
		}
		if len(n.args) > 0 {
			args := append([]string{}, n.args...)
			sort.Strings(args)
			fmt.Fprintf(&b, "complete -c %s -n '%s' -f -a '%s'\n", app.Name, cond, strings.Join(args, " "))
		}
	}
	return b.String(), nil
}
