package agents

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// libraryHead is the front matter as a YAML library reads it into the
// fields ask takes from it: the oracle for readHead.
type libraryHead struct {
	Name           string       `yaml:"name"`
	Description    string       `yaml:"description"`
	Tools          *libraryList `yaml:"tools"`
	Disallowed     libraryList  `yaml:"disallowedTools"`
	Model          string       `yaml:"model"`
	MaxTurns       int          `yaml:"maxTurns"`
	PermissionMode string       `yaml:"permissionMode"`
}

type libraryList []string

func (t *libraryList) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err == nil {
		*t = nil
		for _, e := range strings.Split(s, ",") {
			if e = strings.TrimSpace(e); e != "" {
				*t = append(*t, e)
			}
		}
		return nil
	}
	var list []string
	if err := unmarshal(&list); err != nil {
		return errors.New("not a tool list")
	}
	*t = slices.DeleteFunc(list, func(e string) bool { return strings.TrimSpace(e) == "" })
	return nil
}

// FuzzSameFieldsAsYAMLLibrary: a definition Parse takes has the fields a
// YAML library reads from it, tools above all: a list read wrong would
// give a subagent tools its author did not.
func FuzzSameFieldsAsYAMLLibrary(f *testing.F) {
	for _, s := range []string{
		"name: a\ntools: Read, Grep\nmaxTurns: 3\npermissionMode: plan\n",
		"tools:\n  - Read\n  - \"Bash(git log:*)\"\ndisallowedTools: [Write, Edit]\n",
		"tools: []\nmodel: haiku\n", "tools:\ndescription: >\n  a\n  b\n", "tools: ''\n", "tools: [a, '', ~]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, head string) {
		for line := range strings.Lines(head) {
			if strings.TrimRight(line, " \t\r\n") == "---" || strings.Contains(line, "\r") {
				return // the end of the front matter, or a line end Parse reads for the library
			}
		}
		d, err := Parse([]byte("---\n"+head+"\n---\nprompt"), "/agents/x.md")
		if err != nil {
			return
		}
		var h libraryHead
		if err := yaml.Unmarshal([]byte(head+"\n"), &h); err != nil {
			t.Fatalf("Parse took %q, which the library refuses: %v", head, err)
		}
		want := Definition{Name: cmpOr(h.Name, "x"), Description: strings.TrimSpace(h.Description), Disallowed: []string(h.Disallowed),
			Model: strings.TrimSpace(h.Model), MaxTurns: h.MaxTurns, PermissionMode: strings.TrimSpace(h.PermissionMode), Prompt: "prompt", Path: "/agents/x.md"}
		if h.Tools != nil {
			want.Tools, want.toolsGiven = []string(*h.Tools), true
		}
		if !reflect.DeepEqual(d, want) {
			t.Fatalf("Parse read %q as\n%#v\nthe library as\n%#v", head, d, want)
		}
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
