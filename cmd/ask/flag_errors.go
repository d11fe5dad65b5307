package main

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/suggest"
)

// Flag errors come from Go's flag package in its own words ("invalid value
// "5" for flag -timeout: parse error", "flag provided but not defined:
// -frobnicate"); flagError says them in ask's, with what to do.

// The expressions compile on first use: most runs have no flag error, and
// every process would pay for compiling them at init.
var (
	reUndefined = lazyRegexp(`^flag provided but not defined: -+(.+)$`)
	reBadValue  = lazyRegexp(`^invalid (?:boolean )?value (".*") for (?:flag )?-+([^:]+): `)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// flagError rewrites a flag parsing error of the command at path (as "ask"
// or "ask provider send") whose flags are flags.
func flagError(err error, flags []cli.Flag, path string) error {
	msg := err.Error()
	see := fmt.Sprintf("see %s --help", path)
	if m := reUndefined().FindStringSubmatch(msg); m != nil {
		hint := see
		if near := nearestFlag(m[1], flags); near != "" {
			hint = "did you mean " + near + "?"
		}
		return usageErr("unknown flag %s: %s", dashed(m[1]), hint)
	}
	if m := reBadValue().FindStringSubmatch(msg); m != nil {
		return usageErr("%s %s: %s", dashed(m[2]), m[1], flagHint(findFlag(m[2], flags), see))
	}
	return withCode(exitUsage, fmt.Errorf("%w (%s)", err, see))
}

// dashed writes a flag name as it is typed: -v, --timeout.
func dashed(name string) string {
	if len([]rune(name)) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagHint says what kind of value the flag f takes; see, for a flag
// ask does not know. (A flag missing its value never reaches urfave/cli:
// the argv pass says so.)
func flagHint(f cli.Flag, see string) string {
	if f == nil {
		return see
	}
	return valueHint(kindOf(f), see)
}

func findFlag(name string, flags []cli.Flag) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// nearestFlag is the flag whose name is nearest to name, as typed, when
// it is near enough to be what was meant: at most two edits, and fewer
// than half the name. The main command's flags count for every command:
// any command line may give them.
func nearestFlag(name string, flags []cli.Flag) string {
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	for _, r := range settings.Rows() {
		if !r.ConfigOnly {
			names = append(names, r.Name)
		}
	}
	if best := suggest.Near(strings.ToLower(name), names); best != "" {
		return dashed(best)
	}
	return ""
}
