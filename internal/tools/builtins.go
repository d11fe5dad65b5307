package tools

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
func IsBuiltin(name string) bool {
	for _, t := range Builtins(nil) {
		if t.Info().Name == name {
			return true
		}
	}
	return false
}
