package tools

import "slices"

// Builtins returns the built-in tools, confined to root, in the order they
// are offered to the model: read-only tools first.
func Builtins(root *Root) []Tool {
	return []Tool{
		readFile{root},
		listDirectory{root},
		search{root},
		editFile{root},
		writeFile{root},
		shell{root},
	}
}

// IsBuiltin reports whether name is one of the tools that come with ask.
func IsBuiltin(name string) bool { return slices.Contains(BuiltinNames(), name) }

// BuiltinNames are the names of the tools that come with ask.
func BuiltinNames() []string {
	var names []string
	for _, t := range Builtins(nil) {
		names = append(names, t.Info().Name)
	}
	return names
}
