package tools

import (
	"strings"
	"testing"
)

// FuzzIgnoreRules: no .gitignore line, however odd, makes matching fail or
// panic; a .gitignore is whatever a repository holds.
func FuzzIgnoreRules(f *testing.F) {
	for _, seed := range []string{"build/\n*.log\n!keep.log\n/top.txt\n", "**\n", "!\n", "/\n", "\\#x\n", "a/**/b\n", "[\n", "**/\n", "\x00\n", " \n"} {
		f.Add(seed, "a/b/c.txt", false)
	}
	f.Fuzz(func(t *testing.T, content, p string, isDir bool) {
		ir := &ignoreRules{prefix: []string{"sub"}}
		ir.add([]byte(content), []string{"sub"})
		ir.add([]byte(content), []string{"sub", "x"})
		p = strings.Trim(p, "/")
		if p == "" || strings.Contains(p, "//") {
			return
		}
		_ = ir.ignored(p, isDir)
	})
}
