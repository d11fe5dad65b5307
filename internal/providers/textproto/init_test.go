package textproto

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNothingCompiledAtInit keeps the package free for runs that do not
// use the text protocol: no package-level variable may compile a regular
// expression (or call anything but lazyRegexp and sync.OnceValue) when
// the program starts.
func TestNothingCompiledAtInit(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sources: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.VAR {
				continue
			}
			ast.Inspect(gen, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					return false // runs when called, not at init
				}
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch fn := call.Fun.(type) {
				case *ast.ParenExpr:
					return false // a conversion, such as (*Protocol)(nil)
				case *ast.Ident:
					if fn.Name == "lazyRegexp" {
						return false
					}
				case *ast.SelectorExpr:
					if pkg, ok := fn.X.(*ast.Ident); ok && (pkg.Name == "sync" && fn.Sel.Name == "OnceValue" || pkg.Name == "errors" && fn.Sel.Name == "New") {
						return false
					}
				}
				t.Errorf("%s: a package-level variable calls %s at init; compile it on first use (lazyRegexp, sync.OnceValue)",
					fset.Position(call.Pos()), funcName(call.Fun))
				return false
			})
		}
	}
}

func funcName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return funcName(e.X) + "." + e.Sel.Name
	}
	return "a function"
}
