package frontmatter

import (
	"errors"
	"strings"
	"testing"
)

type head struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in  string
		want      head
		body, err string
	}{
		{"plain", "---\nname: a\ndescription: does a\n---\n# A\nbody\n", head{"a", "does a"}, "# A\nbody\n", ""},
		{"crlf and bom", "\xef\xbb\xbf---\r\nname: a\r\n---\r\nbody", head{Name: "a"}, "body", ""},
		{"unknown keys ignored", "---\nname: a\nmodel: x\nmetadata: {k: v}\n---\n", head{Name: "a"}, "", ""},
		{"empty front matter", "---\n---\nbody", head{}, "body", ""},
		{"no front matter", "# just markdown\n", head{}, "", "no front matter"},
		{"never closed", "---\nname: a\n", head{}, "", "never ends"},
		{"bad yaml", "---\nname: [a\n---\n", head{}, "", "front matter: yaml:"},
		{"not a mapping", "---\n- a\n---\n", head{}, "", "front matter: yaml:"},
		{"too large", "---\nname: a\n---\n" + strings.Repeat("x", MaxSize), head{}, "", "more than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var h head
			body, err := Parse([]byte(tt.in), &h)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("err %q spans lines; it becomes a one-line warning", err)
				}
				return
			}
			if err != nil || h != tt.want || body != tt.body {
				t.Errorf("Parse = %+v, %q, %v; want %+v, %q", h, body, err, tt.want, tt.body)
			}
		})
	}
	if _, err := Parse([]byte("x"), &head{}); !errors.Is(err, ErrNone) {
		t.Errorf("a file without front matter: %v, want ErrNone", err)
	}
}

// FuzzParse: any input gives a body or an error of one line, never a
// panic, and a body is always a suffix of the input.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"---\nname: a\ndescription: b\n---\nbody", "---\r\n---\r\n", "---\nname: [\n---\n", "---\n&a [*a]\n---\n", "--- \n?\n---"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		body, err := Parse(data, &m)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if !strings.HasSuffix(string(data), body) {
			t.Fatalf("body %q is not the end of the input", body)
		}
	})
}
