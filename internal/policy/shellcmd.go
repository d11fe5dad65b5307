package policy

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"mvdan.cc/sh/v3/syntax"

	"github.com/ask-cli/ask/internal/providers"
)

// This file reads a shell tool's command line as the shell will: the
// simple commands it runs, each rendered canonically, so that rules judge
// commands and not the string the model wrote.

// simpleCommand is one command a command line runs: its assignments and
// words, each rendered canonically (a literal as it reads once quotes and
// escapes are removed, quoted again only where it needs to be; anything
// else as it is written).
type simpleCommand struct {
	words   []string
	assigns int // how many of words are leading NAME=VALUE assignments
	// redirs are the redirections into files, each rendered as the
	// operator with its descriptor, a space and the target ("> out.txt",
	// "2>> log"): part of the command, so that a rule allows a command
	// writing a file only when it names that too. Redirections from a file,
	// here-documents, descriptor duplications (2>&1) and /dev/null are
	// not among them: they change no file.
	redirs []string
	// guess marks a reading that only deny rules see: what a wrapper such
	// as sudo or xargs, eval's literal text, or the arguments after a
	// command name that is itself an expansion may run. Allow rules and
	// "always" never rest on a guess.
	guess bool
}

// String is the command as the rules match it: its words, then its
// redirections into files.
func (c simpleCommand) String() string {
	return strings.Join(append(append([]string{}, c.words...), c.redirs...), " ")
}

// key is what "always" approves for this command: its assignments, its
// program, and the word after the program when that reads as a
// subcommand (go test, git status, make check), not an option or a path;
// then the files it writes by redirection, so that "always cat" is not
// "always cat > ~/.bashrc".
func (c simpleCommand) key() string {
	n := c.assigns + 1
	if n < len(c.words) && subcommand().MatchString(c.words[n]) && !noSubcommands[c.words[c.assigns]] {
		n++
	}
	if n > len(c.words) {
		n = len(c.words)
	}
	return strings.Join(append(append([]string{}, c.words[:n]...), c.redirs...), " ")
}

// noSubcommands are programs whose first argument is a file, a pattern
// or a script, never a subcommand: "always" for cat notes.txt is any cat
// (as the question says), where for git status it is git status, not any
// git. A program missing here keeps its first word in the key, which
// approves less, never more.
var noSubcommands = map[string]bool{
	"cat": true, "ls": true, "head": true, "tail": true, "wc": true, "grep": true, "egrep": true, "fgrep": true,
	"rg": true, "less": true, "more": true, "file": true, "stat": true, "du": true, "diff": true, "sort": true,
	"uniq": true, "cut": true, "tr": true, "echo": true, "printf": true, "pwd": true, "which": true, "tree": true,
	"touch": true, "mkdir": true, "jq": true, "sed": true, "awk": true,
	"python": true, "python3": true, "node": true, "ruby": true, "perl": true,
}

// subcommand compiles on first use, not in every process at init.
var subcommand = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_.:-]*$`) })

// maxDepth bounds the scripts read inside scripts (sh -c 'sh -c …') and
// the wrappers inside wrappers (nohup env nice …).
const maxDepth = 8

// commands reads a command line as /bin/sh -c would run it and returns the
// simple commands in it: each side of ;, &&, ||, | and &, the commands
// inside $( ), backquotes, <( ), >( ), subshells, blocks, functions'
// bodies, if, while, for and case, assignments' values, redirections and
// here-documents, and the commands that wrappers run (env, nohup, exec,
// command, nice, timeout, sh -c with a literal script). static is false
// when what the line runs cannot be known from its text: a parameter or
// arithmetic expansion, $'…', an extended glob, [[ ]], (( )) and let, a
// command name that is an expansion or a glob, eval, xargs, find -exec, a
// shell -c whose script is not a literal, a redirection without a command,
// or a line that does not parse (err). Nor is it static where the parser
// and /bin/sh (dash, or bash) read the line apart (see readApart): a
// comment with a backslash, a line continuation in a here-document or
// backquotes, &>, brace expansion, and what changes how later text reads
// or which program a name runs (alias, shopt, enable, hash, trap, the
// prompt and startup variables). Deny rules still see every command
// found, and the guesses.
func commands(line string) (cmds []simpleCommand, static bool, err error) {
	w := &walker{static: true}
	if strings.IndexFunc(line, oddControl) >= 0 {
		// No shell is handed a NUL (exec refuses it), and the parser stops
		// at one; a carriage return it folds into a line break where sh
		// keeps it as a character (after a backslash, say). Rather than
		// learn each control character the two read apart, judge the
		// pieces any of them separates, as a line never allowed.
		line, w.static = strings.Map(func(r rune) rune {
			if oddControl(r) {
				return '\n'
			}
			return r
		}, line), false
	}
	if err := w.script(line, 0, false); err != nil {
		return w.cmds, false, err
	}
	if w.static && readsOtherwiseInPOSIX(line, w.cmds) {
		w.static = false
	}
	return w.cmds, w.static, nil
}

// readsOtherwiseInPOSIX reports whether the parser's POSIX dialect, which
// is how dash reads a line, cannot judge it or finds a command in it that
// its bash dialect did not (cmds). A line POSIX cannot parse (cat <<< x)
// runs nothing in dash, and is judged as bash reads it. time is dash's
// program and bash's keyword: both readings judge what it runs.
func readsOtherwiseInPOSIX(line string, cmds []simpleCommand) bool {
	p := &walker{static: true, posix: true}
	if err := p.script(line, 0, false); err != nil {
		return false
	}
	if !p.static {
		return true
	}
	var bash []string
	for _, c := range (&shellLine{cmds: cmds}).runs() {
		bash = append(bash, c.String())
	}
	for _, c := range (&shellLine{cmds: p.cmds}).runs() {
		if c.assigns < len(c.words) && c.words[c.assigns] == "time" {
			continue
		}
		if !slices.Contains(bash, c.String()) {
			return true
		}
	}
	return false
}

// readApart reports text that mvdan.cc/sh and /bin/sh read differently,
// found in the source itself so that it holds whatever the parser makes
// of it:
//   - a comment whose line ends in a backslash: the parser joins the next
//     line to the comment, dash and bash end the comment and run that line
//     (git status # x \⏎rm -rf ~);
//   - a line continuation in a script with a here-document (bash joins it
//     before it looks for the delimiter, the parser and dash do not) or
//     with backquotes (dash and the parser disagree on what `…\⏎…` holds).
//
// A backslash-newline elsewhere (between words, inside one) reads alike,
// and is judged as usual.
func readApart(src string) bool {
	continued := strings.Contains(src, "\\\n")
	if !continued {
		return false
	}
	if strings.Contains(src, "<<") || strings.Contains(src, "`") {
		return true
	}
	for i := 0; i < len(src); i++ {
		if src[i] != '#' || i > 0 && !strings.ContainsRune(" \t\n;&|()<>`", rune(src[i-1])) {
			continue
		}
		end := strings.IndexByte(src[i:], '\n')
		if end < 0 {
			return false // the comment runs to the end: nothing follows it
		}
		if strings.HasSuffix(strings.TrimRight(src[i:i+end], " \t"), `\`) {
			return true
		}
		i += end
	}
	return false
}

// oddControl reports the control characters a command line has no need
// of: all but tab and newline.
func oddControl(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' || r == 0x7f }

type walker struct {
	cmds   []simpleCommand
	static bool
	posix  bool // read as POSIX sh, not bash
	// redirs holds the redirections into files of the statement each
	// simple command is, found at the statement and used at the command.
	redirs map[syntax.Command][]string
}

func parse(src string, posix bool) (*syntax.File, error) {
	// Bash's grammar is a superset of POSIX sh for what matters here:
	// /bin/sh is bash on some systems, and what bash alone would read
	// differently ($'…', [[ ]]) is not judged statically; where the POSIX
	// reading differs, neither is (see readsOtherwiseInPOSIX). Comments
	// are kept to be judged: see readApart.
	lang := syntax.LangBash
	if posix {
		lang = syntax.LangPOSIX
	}
	return syntax.NewParser(syntax.Variant(lang), syntax.KeepComments(true)).Parse(strings.NewReader(src), "")
}

// script reads src, at depth scripts deep; guess marks what it finds as
// seen by deny rules only.
func (w *walker) script(src string, depth int, guess bool) error {
	if depth > maxDepth {
		w.static = false
		return nil
	}
	if readApart(src) {
		w.static = false
	}
	f, err := parse(src, w.posix)
	if err != nil {
		w.static = false
		w.unparsed(src)
		return err
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Comment:
			// The parser continues a comment past a backslash-newline;
			// sh does not (see readApart). A backslash anywhere in a
			// comment is reason enough not to judge it.
			if strings.ContainsAny(n.Text, "\\\n\r") {
				w.static = false
			}
		case *syntax.Stmt:
			files := w.fileRedirects(n.Redirs)
			switch n.Cmd.(type) {
			case *syntax.CallExpr, *syntax.DeclClause:
				if w.redirs == nil {
					w.redirs = map[syntax.Command][]string{}
				}
				w.redirs[n.Cmd] = files
			case nil:
				if len(n.Redirs) > 0 {
					w.static = false // "> file" alone: no command, a file changed
				}
			default:
				if len(files) > 0 {
					// "{ …; } > file": no one command names the file.
					w.static = false
				}
			}
		case *syntax.CallExpr:
			w.call(n, depth, guess)
		case *syntax.DeclClause:
			w.decl(n, depth, guess)
		case *syntax.ParamExp, *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause,
			*syntax.TestClause, *syntax.ExtGlob, *syntax.CoprocClause:
			w.static = false
		case *syntax.SglQuoted:
			if n.Dollar {
				w.static = false
			}
		case *syntax.DblQuoted:
			if n.Dollar {
				w.static = false
			}
		}
		return true // commands inside words are commands too
	})
	return nil
}

// fileRedirects renders the redirections that write a file, and marks
// the line not static where their reading is the shell's alone.
func (w *walker) fileRedirects(rs []*syntax.Redirect) []string {
	var out []string
	for _, r := range rs {
		fd := ""
		if r.N != nil {
			fd = r.N.Value
			if strings.Trim(fd, "0123456789") != "" {
				// {fd}>file: bash picks a descriptor; to dash {fd} is a
				// word of the command.
				w.static = false
			}
		}
		switch r.Op {
		case syntax.RdrIn, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			continue // reads
		case syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
			// To dash "cmd &> f" is "cmd &" and then "> f".
			w.static = false
		}
		if r.Word == nil {
			continue
		}
		target := render(r.Word)
		if target.literal && !target.pattern {
			switch {
			case target.value == "/dev/null":
				continue
			case r.Op == syntax.DplOut && (target.value == "-" || strings.Trim(target.value, "0123456789") == ""):
				continue // 2>&1, >&-: no file
			}
		}
		if target.pattern {
			w.static = false // a glob or a brace: bash expands it
		}
		if fd == "1" && (r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrClob || r.Op == syntax.DplOut) ||
			fd == "0" && r.Op == syntax.RdrInOut {
			fd = "" // the operator's own descriptor: 1> f is > f
		}
		out = append(out, fd+r.Op.String()+" "+target.text)
	}
	return out
}

// unparsed lets deny rules see a line the parser refused (bash may still
// run part of it) as words: the text from the start of each word on, with
// the shell's operators and quotes taken for spaces.
func (w *walker) unparsed(src string) {
	text := strings.Join(strings.FieldsFunc(src, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(";&|()<>{}`$\"'\\", r)
	}), " ")
	for i := 0; i < len(text); i++ {
		if i == 0 || text[i-1] == ' ' {
			w.cmds = append(w.cmds, simpleCommand{words: []string{text[i:]}, guess: true})
		}
	}
}

// word is one word of a command, rendered.
type word struct {
	text    string // canonical
	value   string // the word's value, when literal
	literal bool   // no expansion, no substitution
	pattern bool   // an unquoted glob or brace: literal, but not its own value
	// substituted marks a word that is literal but for command or process
	// substitutions, whose commands are judged in their own right.
	substituted bool
}

func (w *walker) call(c *syntax.CallExpr, depth int, guess bool) {
	var assigns, args []word
	for _, a := range c.Assigns {
		assigns = append(assigns, w.assign(a))
	}
	for _, x := range c.Args {
		args = append(args, w.renderArg(x))
	}
	w.command(assigns, args, w.redirs[c], depth, guess)
}

func (w *walker) decl(d *syntax.DeclClause, depth int, guess bool) {
	args := []word{{text: d.Variant.Value, value: d.Variant.Value, literal: true}}
	for _, a := range d.Args {
		args = append(args, w.assign(a))
	}
	w.command(nil, args, w.redirs[d], depth, guess)
}

// assign renders NAME=VALUE; an array or an index is not judged.
func (w *walker) assign(a *syntax.Assign) word {
	if a.Name == nil || a.Index != nil || a.Array != nil {
		w.static = false
		return word{text: printed(a)}
	}
	op := "="
	if a.Append {
		op = "+="
	}
	if a.Naked {
		return word{text: a.Name.Value, value: a.Name.Value, literal: true}
	}
	v := word{literal: true}
	if a.Value != nil {
		v = render(a.Value)
	}
	if !v.literal && !v.substituted {
		w.static = false
	}
	if startupVars[a.Name.Value] {
		// A prompt or startup variable is code the shell runs later
		// (PS4 under set -x, BASH_ENV in the next bash).
		w.static = false
		if v.literal {
			_ = w.script(v.value, 0, true) // judged as far as it parses
		}
	}
	s := a.Name.Value + op + v.value
	return word{text: a.Name.Value + op + v.text, value: s, literal: v.literal, substituted: v.substituted}
}

// command records one simple command and what it runs in turn; redirs
// are its redirections into files.
func (w *walker) command(assigns, args []word, redirs []string, depth int, guess bool) {
	cmd := simpleCommand{assigns: len(assigns), guess: guess, redirs: redirs}
	for _, x := range append(append([]word{}, assigns...), args...) {
		cmd.words = append(cmd.words, x.text)
	}
	if len(cmd.words) == 0 {
		return
	}
	w.cmds = append(w.cmds, cmd)
	if len(args) == 0 {
		return
	}
	for _, x := range args {
		if !x.literal && !x.substituted {
			// A value known only when the line runs: the command may
			// be anything a pattern would not have let through.
			w.static = false
		}
	}
	name := args[0]
	if depth > maxDepth {
		w.static = false
		w.suffixes(args, redirs)
		return
	}
	if !name.literal || name.pattern {
		w.static = false
		w.suffixes(args, redirs)
		return
	}
	prog := path.Base(name.value)
	if prog != name.value {
		// /bin/rm is rm to a deny rule; only rm itself is rm to an allow
		// rule.
		g := cmd
		g.words = append(append([]string{}, cmd.words[:cmd.assigns]...), append([]string{quote(prog)}, cmd.words[cmd.assigns+1:]...)...)
		g.guess = true
		w.cmds = append(w.cmds, g)
	}
	if strings.HasPrefix(prog, "-") {
		// No program is named -o; but "time -o f rm x" is bash's time
		// keyword running "-o f rm x", and dash's time program running
		// rm x.
		w.static = false
		w.suffixes(args, redirs)
		return
	}
	rest := args[1:]
	switch prog {
	case "eval":
		w.static = false
		if values, ok := literals(rest); ok {
			_ = w.script(strings.Join(values, " "), depth+1, true) // judged as far as it parses
		}
		w.suffixes(args, redirs)
	case "alias", "trap":
		// Text that runs later, in place of a name (alias, which dash
		// expands in sh -c) or on a signal or exit (trap).
		w.static = false
		for i, x := range rest {
			if !x.literal {
				continue
			}
			if _, v, ok := strings.Cut(x.value, "="); ok && prog == "alias" {
				_ = w.script(v, depth+1, true) // judged as far as it parses
			} else if i == 0 && prog == "trap" {
				_ = w.script(x.value, depth+1, true)
			}
		}
	case "shopt", "enable", "hash":
		// They change how later text is read (shopt -s expand_aliases,
		// extglob) or what a name runs (enable -f, hash -p).
		w.static = false
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "posh", "yash":
		w.shell(rest, redirs, depth, guess)
	case "busybox":
		if len(rest) > 0 && rest[0].literal && (rest[0].value == "sh" || rest[0].value == "ash") {
			w.shell(rest[1:], redirs, depth, guess)
			return
		}
		w.suffixes(args, redirs)
	case "command", "builtin", "exec", "nohup", "time", "env", "nice", "timeout":
		inner, ok := wrapped(prog, rest)
		if !ok {
			w.static = false
			w.suffixes(args, redirs)
			return
		}
		if len(inner) > 0 {
			var as []word
			for len(inner) > 0 && inner[0].literal && isAssignment(inner[0].value) {
				as, inner = append(as, inner[0]), inner[1:]
			}
			w.command(as, inner, redirs, depth+1, guess)
		}
	case "xargs", "find", "sudo", "doas", "su", "watch", "ssh", "chroot", "stdbuf", "setsid", "flock",
		"unbuffer", "strace", "ltrace", "nsenter", "unshare", "ionice", "chrt", "taskset", "script", "parallel":
		if prog == "xargs" || prog == "parallel" || (prog == "find" && hasAny(rest, "-exec", "-execdir", "-ok", "-okdir")) ||
			prog == "su" || prog == "watch" || prog == "script" {
			// They run a command made up when the line runs, or a
			// string through a shell.
			w.static = false
		}
		w.suffixes(args, redirs)
	}
}

// suffixes lets deny rules see every tail of a command's words as a
// command of its own: what a wrapper or an unknown command name may run.
func (w *walker) suffixes(args []word, redirs []string) {
	for i := 1; i < len(args); i++ {
		g := simpleCommand{guess: true, redirs: redirs}
		for _, x := range args[i:] {
			g.words = append(g.words, x.text)
		}
		w.cmds = append(w.cmds, g)
		if x := args[i]; x.literal && path.Base(x.value) != x.value {
			g.words = append([]string{quote(path.Base(x.value))}, g.words[1:]...)
			w.cmds = append(w.cmds, g)
		}
	}
}

// shell judges sh -c SCRIPT: a literal script is read in turn, anything
// else is not static. Without -c the shell runs a file or its input, which
// is the shell command's own business.
func (w *walker) shell(rest []word, redirs []string, depth int, guess bool) {
	dashC := false
	for i := 0; i < len(rest); i++ {
		x := rest[i]
		if !x.literal {
			w.static = false
			w.suffixes(rest, redirs)
			return
		}
		v := x.value
		switch {
		case v == "--" || v == "-":
			if !dashC {
				return
			}
			continue
		case v == "-o" || v == "+o" || v == "-O" || v == "+O" || v == "--rcfile" || v == "--init-file":
			i++
			continue
		case strings.HasPrefix(v, "--"):
			continue
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			if v[0] == '-' && strings.ContainsRune(v, 'c') {
				dashC = true
			}
			continue
		}
		if !dashC {
			return // a script file
		}
		if err := w.script(v, depth+1, guess); err != nil {
			w.static = false
		}
		return
	}
	if dashC {
		w.static = false // -c without a script
	}
}

// wrapped is the command a wrapper runs: its words after the wrapper's
// own options. ok is false when the options cannot be read.
func wrapped(prog string, rest []word) (inner []word, ok bool) {
	takesValue := map[string][]string{
		"exec":    {"-a"},
		"env":     {"-u", "--unset", "-C", "--chdir"},
		"nice":    {"-n", "--adjustment"},
		"timeout": {"-k", "--kill-after", "-s", "--signal"},
	}[prog]
	known := map[string][]string{
		"command": {"-p"},
		"builtin": {},
		"exec":    {"-c", "-l", "-cl", "-lc"},
		"nohup":   {},
		"time":    {"-p"},
		"env":     {"-i", "-", "--ignore-environment", "-0", "--null"},
		"nice":    {},
		"timeout": {"--preserve-status", "--foreground", "-v", "--verbose"},
	}[prog]
	i := 0
	for ; i < len(rest); i++ {
		x := rest[i]
		if !x.literal {
			return nil, false
		}
		v := x.value
		if v == "--" {
			i++
			break
		}
		if !strings.HasPrefix(v, "-") || v == "-" && prog != "env" {
			break
		}
		name, _, withValue := strings.Cut(v, "=")
		switch {
		case slices.Contains(known, v):
		case slices.Contains(takesValue, name) && withValue:
		case slices.Contains(takesValue, v):
			i++
		case prog == "nice" && len(v) > 1 && strings.Trim(v[1:], "0123456789") == "":
		case prog == "command" && (v == "-v" || v == "-V"):
			return nil, true // prints what the name is, runs nothing
		default:
			return nil, false
		}
	}
	if i > len(rest) {
		return nil, false
	}
	inner = rest[i:]
	if prog == "timeout" {
		if len(inner) == 0 {
			return nil, false
		}
		inner = inner[1:] // the duration
	}
	return inner, true
}

func hasAny(ws []word, values ...string) bool {
	for _, x := range ws {
		if slices.Contains(values, x.value) {
			return true
		}
	}
	return false
}

func literals(ws []word) ([]string, bool) {
	var out []string
	for _, x := range ws {
		if !x.literal {
			return nil, false
		}
		out = append(out, x.value)
	}
	return out, true
}

// isAssignment tells whether s starts with NAME=, NAME a shell variable
// name.
func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	return ok && syntax.ValidName(name)
}

// startupVars are the variables whose value a shell runs, or reads as
// its options, later.
var startupVars = map[string]bool{"PS1": true, "PS2": true, "PS3": true, "PS4": true, "PROMPT_COMMAND": true,
	"ENV": true, "BASH_ENV": true, "SHELLOPTS": true, "BASHOPTS": true}

// renderArg reads one word of a command. An unquoted brace expansion
// ({a,b}, {1..3}) is one word to dash and several to bash: not static.
func (w *walker) renderArg(x *syntax.Word) word {
	r := render(x)
	if r.pattern && braceExpansion().MatchString(x.Lit()) {
		w.static = false
	}
	return r
}

// braceExpansion finds a brace that bash expands: a comma or a range
// between { and }.
var braceExpansion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{[^{}]*(,|\.\.)[^{}]*\}`) })

// render reads one word.
func render(x *syntax.Word) word {
	var b strings.Builder
	literal, pattern, plain, substituted := true, false, true, true
	for _, part := range x.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v, escaped := unescape(p.Value, false)
			if escaped {
				plain = false
			}
			if strings.ContainsAny(p.Value, "*?[{") {
				pattern = true
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			plain = false
			if p.Dollar {
				literal = false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			plain = false
			if p.Dollar {
				literal = false
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					literal = false
					if _, ok := q.(*syntax.CmdSubst); !ok {
						substituted = false
					}
					continue
				}
				v, _ := unescape(lit.Value, true)
				b.WriteString(v)
			}
		case *syntax.CmdSubst, *syntax.ProcSubst:
			literal = false
		default:
			literal, substituted = false, false
		}
	}
	if !literal {
		return word{text: printed(x), substituted: substituted && !pattern}
	}
	value := b.String()
	if pattern {
		if !plain {
			// A glob next to quotes: its reading is the shell's at run
			// time; keep the source, judged as not static.
			return word{text: printed(x), value: value, literal: false, pattern: true}
		}
		return word{text: x.Lit(), value: value, literal: true, pattern: true}
	}
	return word{text: quote(value), value: value, literal: true}
}

// unescape removes backslashes as the shell does, outside double quotes
// or inside them.
func unescape(s string, quoted bool) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		if quoted && !strings.ContainsRune("$`\"\\\n", rune(next)) {
			b.WriteByte(c)
			continue
		}
		i++
		if next != '\n' {
			b.WriteByte(next)
		}
	}
	return b.String(), true
}

// quote renders a literal value: as it is when it needs no quotes, else in
// single quotes.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./~^-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func printed(n syntax.Node) string {
	var b strings.Builder
	_ = syntax.NewPrinter(syntax.Minify(true)).Print(&b, n) // a strings.Builder does not fail
	return strings.Join(strings.Fields(b.String()), " ")
}

// shellLine is a shell call's command line as the rules see it.
type shellLine struct {
	cmds   []simpleCommand // guesses included
	static bool
}

func readLine(s string) *shellLine {
	cmds, static, _ := commands(s)
	return &shellLine{cmds: cmds, static: static}
}

// runs is the commands the line runs, guesses left out.
func (l *shellLine) runs() []simpleCommand {
	var out []simpleCommand
	for _, c := range l.cmds {
		if !c.guess {
			out = append(out, c)
		}
	}
	return out
}

// keys is what "always" would approve for the line, each command's key
// once, in order; nil when the line is not static.
func (l *shellLine) keys() []string {
	if !l.static {
		return nil
	}
	var out []string
	for _, c := range l.runs() {
		if k := c.key(); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// approved reports whether "always" answers cover the line: it is static
// and the key of each of its commands was approved.
func (l *shellLine) approved(keys map[string]bool) bool {
	ks := l.keys()
	for _, k := range ks {
		if !keys[k] {
			return false
		}
	}
	return len(ks) > 0
}

// alwaysKeys is what "always" approves for a shell call; nil for another
// tool's.
func alwaysKeys(c providers.ToolCall) []string {
	if c.Name != ShellTool {
		return nil
	}
	return readLine(Summary(c.Arguments)).keys()
}
