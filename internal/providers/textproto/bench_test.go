package textproto

import (
	"strings"
	"testing"
)

// BenchmarkParse reads a long reply: prose, code with braces, a data
// example and three calls in the forms models use.
func BenchmarkParse(b *testing.B) {
	tools := testTools(b)
	var r strings.Builder
	for range 40 {
		r.WriteString("The handler reads the config first.\n\n```go\nfunc load(m map[string]int) error {\n\tif m == nil {\n\t\treturn errNil\n\t}\n\treturn nil\n}\n```\n\n")
		r.WriteString("A record looks like {\"name\": \"Bob\", \"age\": 3}.\n\n")
	}
	r.WriteString(`{"tool": "read_file", "parameters": {"path": "go.mod"}, "terminate": false}` + "\n")
	r.WriteString("<tool_call>\n{\"name\": \"search\", \"arguments\": {\"pattern\": \"TODO\"}}\n</tool_call>\n")
	r.WriteString("```bash\nlist_directory internal\n```\n")
	reply := r.String()
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		if res := Parse(reply, tools); len(res.Calls) != 3 {
			b.Fatalf("%d calls: %s", len(res.Calls), res.Error())
		}
	}
}
