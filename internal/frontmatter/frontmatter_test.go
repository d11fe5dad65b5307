package frontmatter

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in          string
		wantName, wantDes string
		body, err         string
	}{
		{"plain", "---\nname: a\ndescription: does a\n---\n# A\nbody\n", "a", "does a", "# A\nbody\n", ""},
		{"crlf and bom", "\xef\xbb\xbf---\r\nname: a\r\n---\r\nbody", "a", "", "body", ""},
		{"unknown keys ignored", "---\nname: a\nmodel: x\nmetadata: {k: v}\n---\n", "a", "", "", ""},
		{"empty front matter", "---\n---\nbody", "", "", "body", ""},
		{"no front matter", "# just markdown\n", "", "", "", "no front matter"},
		{"never closed", "---\nname: a\n", "", "", "", "never ends"},
		{"bad yaml", "---\nname: [a\n---\n", "", "", "", "front matter: line 2: a [ or { never closes"},
		{"not a mapping", "---\n- a\n---\n", "", "", "", "front matter: line 2: front matter must be keys"},
		{"a key twice", "---\nname: a\nname: b\n---\n", "", "", "", `the key "name" is given twice`},
		{"an anchor", "---\nname: &x a\n---\n", "", "", "", "line 2: '&' starts an anchor"},
		{"a tab indents", "---\nmetadata:\n\tk: v\n---\n", "", "", "", "line 3: a tab indents"},
		{"a colon in a plain value", "---\ndescription: Use it: always\n---\n", "", "", "", "line 2: a colon and a space inside a value: quote the value"},
		{"a key in { } over two lines", "---\nmetadata: {\"a\n b\": c}\n---\n", "", "", "", "line 3: a key inside { } must be on one line"},
		{"a long key in { }", "---\nmetadata: {" + strings.Repeat("k", 1001) + ": v}\n---\n", "", "", "", "line 2: a key inside { } must be on one line, at most 1000 characters"},
		{"too large", "---\nname: a\n---\n" + strings.Repeat("x", MaxSize), "", "", "", "more than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, body, err := Parse([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("err %q spans lines; it becomes a one-line warning", err)
				}
				return
			}
			name, _ := f.String("name")
			des, _ := f.String("description")
			if err != nil || name != tt.wantName || des != tt.wantDes || body != tt.body {
				t.Errorf("Parse = name %q, description %q, body %q, %v; want %q, %q, %q", name, des, body, err, tt.wantName, tt.wantDes, tt.body)
			}
		})
	}
	if _, _, err := Parse([]byte("x")); !errors.Is(err, ErrNone) {
		t.Errorf("a file without front matter: %v, want ErrNone", err)
	}
}

func TestFieldsAsTypes(t *testing.T) {
	t.Parallel()
	f, _, err := Parse([]byte("---\nname: a\nlist: [x, 'y', ~]\nmap: {k: v}\nturns: 12\nquoted: \"12\"\nneg: -3\nhex: 0x10\nnothing:\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := f.String("list"); err == nil {
		t.Errorf("String(list) = %q, want an error", s)
	}
	if s, err := f.String("map"); err == nil {
		t.Errorf("String(map) = %q, want an error", s)
	}
	if s, err := f.String("absent"); s != "" || err != nil {
		t.Errorf("String(absent) = %q, %v", s, err)
	}
	for key, want := range map[string]int{"turns": 12, "neg": -3, "nothing": 0, "absent": 0} {
		if n, err := f.Int(key); n != want || err != nil {
			t.Errorf("Int(%s) = %d, %v; want %d", key, n, err, want)
		}
	}
	for _, key := range []string{"quoted", "hex", "list", "name"} {
		if n, err := f.Int(key); err == nil {
			t.Errorf("Int(%s) = %d, want an error", key, n)
		}
	}
	if l, ok := f.Get("list").List(); !ok || strings.Join(l, "|") != "x|y|" {
		t.Errorf("List(list) = %q, %v", l, ok)
	}
	if _, ok := f.Get("map").List(); ok {
		t.Error("a mapping read as a list")
	}
	if !f.Get("nothing").IsNull() || !f.Get("absent").IsNull() || f.Get("name").IsNull() {
		t.Error("IsNull is wrong")
	}
}

// FuzzParse: any input gives a body or an error of one line, never a
// panic, and a body is always a suffix of the input.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"---\nname: a\ndescription: b\n---\nbody", "---\r\n---\r\n", "---\nname: [\n---\n", "---\n&a [*a]\n---\n", "--- \n?\n---"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, body, err := Parse(data)
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
