package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/ask-cli/ask/internal/noblock"
	"github.com/ask-cli/ask/internal/tools"
)

// ToolName is the tool that loads a skill.
const ToolName = "skill"

// Caps on what the prompt's list and the tool return.
const (
	// MaxListing bounds the system prompt's list of skills: it is sent
	// with every request.
	MaxListing = 8 << 10
	maxFiles   = 200
	maxFile    = 50 << 10
)

// Listing is the system prompt's section naming the skills, with how many
// of them it names: those past its cap are left out, and it says so.
func Listing(all []Skill) (text string, listed int) {
	if len(all) == 0 {
		return "", 0
	}
	var b strings.Builder
	b.WriteString("Skills: instructions for particular tasks. Before doing a task one of them fits, call the skill tool with its name and follow what it returns.\n")
	for _, s := range all {
		line := "- " + s.Name + ": " + strings.Join(strings.Fields(s.Description), " ") + "\n"
		if b.Len()+len(line) > MaxListing {
			fmt.Fprintf(&b, "(%d more skills are not listed here.)\n", len(all)-listed)
			break
		}
		b.WriteString(line)
		listed++
	}
	return strings.TrimRight(b.String(), "\n"), listed
}

// Tool is the read-only skill tool over the skills found. onActivate is
// told of each skill whose instructions it returns.
func Tool(all []Skill, onActivate func(Skill)) tools.Tool {
	return skillTool{all: all, onActivate: onActivate}
}

type skillTool struct {
	all        []Skill
	onActivate func(Skill)
}

func (t skillTool) Info() tools.Info {
	return tools.Info{
		Name: ToolName,
		Description: "Load a skill listed in the system prompt: its instructions and the files of its folder. " +
			"Give file (a path the listing names) to read one of those files.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"the skill's name"},` +
			`"file":{"type":"string","description":"a file of the skill's folder, as listed"}},` +
			`"required":["name"]}`),
		Risk: tools.Read,
	}
}

func (t skillTool) Run(_ context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Name string `json:"name"`
		File string `json:"file"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", fmt.Errorf("skill: %v", err)
	}
	s, ok := Lookup(t.all, args.Name)
	if !ok {
		return "", fmt.Errorf("skill: no skill %q; choose one of %s", args.Name, strings.Join(Names(t.all), ", "))
	}
	if args.File != "" {
		return ReadFile(s, args.File)
	}
	files, err := Files(s)
	if err != nil {
		return "", fmt.Errorf("skill %s: %v", s.Name, err)
	}
	if t.onActivate != nil {
		t.onActivate(s)
	}
	return Render(s, files), nil
}

// Render is what the skill tool returns for a skill: its instructions,
// then its folder's files.
func Render(s Skill, files []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %s (%s)\n\n%s", s.Name, s.Dir, strings.TrimSpace(s.Body))
	if len(s.AllowedTools) > 0 {
		fmt.Fprintf(&b, "\n\nWhile this skill is active, only these tools may be used: %s", strings.Join(s.AllowedTools, " "))
	}
	if len(files) > 0 {
		b.WriteString("\n\nFiles of the skill (read one with the skill tool's file argument):\n")
		b.WriteString(strings.Join(files, "\n"))
	}
	return b.String()
}

// Files lists the files of a skill's folder besides SKILL.md, as paths
// inside it, up to a cap. Links are listed as they are, never followed.
func Files(s Skill) ([]string, error) {
	var out []string
	err := fs.WalkDir(os.DirFS(s.Dir), ".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil // an unreadable folder is left out of the list
		case d.IsDir() && path != "." && strings.HasPrefix(d.Name(), "."):
			return fs.SkipDir
		case d.IsDir() || path == FileName:
			return nil
		case len(out) == maxFiles:
			out = append(out, fmt.Sprintf("(more files not listed: past %d)", maxFiles))
			return fs.SkipAll
		}
		out = append(out, path)
		return nil
	})
	return out, err
}

// ReadFile reads one file of a skill's folder. It never reaches outside
// the folder, by a path or a link: the folder may be outside the working
// directory (~/.agents/skills), where the file tools do not reach.
func ReadFile(s Skill, name string) (string, error) {
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		return "", fmt.Errorf("skill %s: %v", s.Name, err)
	}
	defer root.Close()
	// Opened without blocking: a fifo a command made there waits for no
	// writer.
	f, info, err := noblock.OpenIn(root, name)
	if err != nil {
		return "", fmt.Errorf("skill %s: %v", s.Name, err)
	}
	defer f.Close()
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("skill %s: %s is not a file", s.Name, name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return "", fmt.Errorf("skill %s: read %s: %v", s.Name, name, err)
	}
	if len(data) > maxFile {
		return string(data[:maxFile]) + fmt.Sprintf("\n(cut: %s is longer than %d bytes)", name, maxFile), nil
	}
	return string(data), nil
}
