package frontmatter

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// tree is a node as both readers can give it, to compare them: nil for
// null, scalar for a scalar, []any for a list, pairs for a mapping.
type scalar struct {
	Text  string
	Plain bool
}

type pair struct {
	Key   string
	Value any
}

func fromLibrary(n *yaml.Node) any {
	switch n.Kind {
	case 0:
		return []pair{} // an empty document: no keys
	case yaml.DocumentNode:
		return fromLibrary(n.Content[0])
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return nil
		}
		return scalar{n.Value, n.Style == 0}
	case yaml.SequenceNode:
		out := []any{}
		for _, c := range n.Content {
			out = append(out, fromLibrary(c))
		}
		return out
	case yaml.MappingNode:
		out := []pair{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, pair{n.Content[i].Value, fromLibrary(n.Content[i+1])})
		}
		return out
	}
	return fmt.Sprintf("kind %d", n.Kind)
}

func fromOurs(v Value) any {
	switch v.kind {
	case scalarNode:
		return scalar{v.text, v.plain}
	case listNode:
		out := []any{}
		for _, it := range v.items {
			out = append(out, fromOurs(it))
		}
		return out
	case mapNode:
		out := []pair{}
		for i, k := range v.keys {
			out = append(out, pair{k, fromOurs(v.vals[i])})
		}
		return out
	}
	return nil
}

// sameAsLibrary fails t when our reader takes text and reads it other
// than go.yaml.in/yaml/v3 does; ours may refuse what the library takes.
func sameAsLibrary(t *testing.T, text string, mustRead bool) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	ours, err := readYAML(lines)
	if err != nil {
		if mustRead {
			t.Fatalf("our reader refused %q: %v", text, err)
		}
		return
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")+"\n"), &n); err != nil {
		t.Fatalf("we read %q as %#v, which the library refuses: %v", text, fromOurs(ours), err)
	}
	got, want := fromOurs(ours), fromLibrary(&n)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("we read %q as\n%#v\nthe library as\n%#v", text, got, want)
	}
}

// frontMatters are front matter as skills and subagents are written in
// the wild: every form ask reads the same as a YAML library.
var frontMatters = []string{
	"name: pdf\ndescription: Extract text and tables from PDF files. Use when working with PDFs.\nlicense: Apache-2.0\n",
	"name: code-reviewer\ndescription: Expert code reviewer. Use proactively after writing code.\ntools: Read, Grep, Glob, Bash\nmodel: sonnet\n",
	"name: x\ndescription: >-\n  Folded over\n  two lines.\n\n  And a paragraph.\nallowed-tools: Bash(git diff:*) Read\n",
	"name: x\ndescription: |\n  Literal\n    indented\n  kept\n\n\nmetadata:\n  author: someone\n  version: \"1.0\"\n",
	"description: \"Use this agent when...\\n\\n<example>\\nContext: a user asks\\n</example>\"\ntools: [Read, Write, \"Bash(npm test:*)\"]\n",
	"# a comment\nname: 'it''s'   # trailing\ndescription: a plain value\n  that goes on\n\n  and on\n",
	"tools:\n  - Read\n  - Grep\ndisallowedTools:\n- Write\n- Edit\nmaxTurns: 12\npermissionMode: acceptEdits\n",
	"hooks:\n  PreToolUse:\n    - matcher: \"Bash\"\n      hooks:\n        - type: command\n          command: \"./scripts/check.sh\"\nskills: [a, b]\n",
	"description: |+\n  keep\n\n\nname: a\nx: |-\n  strip\n\ny: |2\n    two\n",
	"description: \"folded\n  across lines\n\n  with a break\" \nname: \"esc \\u00e9 \\x41 \\t \\\\ \\\"\"\n",
	"metadata: {}\nlist: []\nempty:\nnull: ~\nquoted-null: \"null\"\n",
	"nested:\n  - - a\n    - b\n  - c: d\n    e: f\n",
	"k: >\n  a\n   more\n  b\n",
	"url: http://example.com/a:b\ntime: 12:30\nneg: -1\n",
	"tools: [\n  Read,\n  Grep\n]\nmap: {a: b, 'c': \"d\", e: }\n",
	"\"a \\\"key\\\"\": 1\n'it''s': two\nlist:\n- \"x: y\"\n- 'k': v\n",
}

func TestSameAsYAMLLibrary(t *testing.T) {
	t.Parallel()
	for i, text := range frontMatters {
		t.Run(fmt.Sprint(i), func(t *testing.T) { sameAsLibrary(t, text, true) })
	}
}

// FuzzSameAsYAMLLibrary: whatever our reader takes, it reads as the
// library does.
func FuzzSameAsYAMLLibrary(f *testing.F) {
	for _, text := range frontMatters {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sameAsLibrary(t, text, false)
	})
}
