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
