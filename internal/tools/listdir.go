package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
)

const listMaxEntries = 500

type listDirectory struct{ root *Root }

func (listDirectory) Info() Info {
	return Info{
		Name:        "list_directory",
		Description: "List a directory's entries, sorted; directories end with \"/\".",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"default \".\""}}}`),
		Risk: Read,
	}
}

func (t listDirectory) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Path string `json:"path"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return "", err
	}
	if args.Path == "" {
		args.Path = "."
	}
	osRoot, rel, err := t.root.openRel(args.Path, false)
	if err != nil {
		return "", fmt.Errorf("list_directory: %w", err)
	}
	defer osRoot.Close()
	info, err := osRoot.Stat(rel)
	if err != nil {
		return "", fmt.Errorf("list_directory: %q: %w", args.Path, unwrapPathError(err))
	}
	if !info.IsDir() {
		return "", fmt.Errorf("list_directory: %q is not a directory; use read_file to read a file", args.Path)
	}
	// fs.ReadDir sorts by name.
	entries, err := fs.ReadDir(osRoot.FS(), rel)
	if err != nil {
		return "", fmt.Errorf("list_directory: %q: %w", args.Path, unwrapPathError(err))
	}
	if len(entries) == 0 {
		return "(empty directory)", nil
	}
	var sb strings.Builder
	for i, e := range entries {
		if i == listMaxEntries {
			fmt.Fprintf(&sb, "[%d more entries not shown; list a subdirectory or use search with glob]\n", len(entries)-i)
			break
		}
		sb.WriteString(e.Name())
		switch {
		case e.IsDir():
			sb.WriteByte('/')
		case e.Type()&fs.ModeSymlink != 0:
			if target, err := osRoot.Readlink(joinRel(rel, e.Name())); err == nil {
				sb.WriteString(" -> " + target)
			}
		}
		sb.WriteByte('\n')
	}
	return validText(strings.TrimSuffix(sb.String(), "\n")), nil
}

func joinRel(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}
