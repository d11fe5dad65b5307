package mcp

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// splitCommand splits an --mcp value into environment assignments and argv,
// the way a shell splits a simple command, without running a shell:
//
//   - blanks separate words;
//   - '...' keeps everything literally;
//   - "..." keeps everything but \" \\ \$ \` (a backslash before anything
//     else stays);
//   - outside quotes, a backslash keeps the next character;
//   - leading NAME=value words set variables for the server
//     (MEMORY_FILE_PATH=/tmp/m.jsonl mcp-server-memory).
//
// There is no expansion of variables, globs or ~: what is written is what
// the server gets.
func splitCommand(s string) (env, argv []string, err error) {
	words, assign, err := splitWords(s)
	if err != nil {
		return nil, nil, err
	}
	i := 0
	for i < len(words) && assign[i] {
		env = append(env, words[i])
		i++
	}
	argv = words[i:]
	if len(argv) == 0 {
		if len(env) > 0 {
			return nil, nil, errors.New("no command after the variable assignments")
		}
		return nil, nil, errors.New("empty command")
	}
	return env, argv, nil
}

// isAssignment tells whether w starts with NAME=, NAME a shell variable
// name.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && syntax.ValidName(name)
}

// splitWords returns the words of s and, for each, whether it has the form
// of an assignment (NAME= written without quotes).
func splitWords(s string) (words []string, assign []bool, err error) {
	var cur strings.Builder
	inWord := false
	quotedAt := -1 // length of cur when its first quoted or escaped part began
	flush := func() {
		if !inWord {
			return
		}
		w := cur.String()
		prefix := w
		if quotedAt >= 0 {
			prefix = w[:quotedAt]
		}
		words = append(words, w)
		assign = append(assign, isAssignment(prefix))
		cur.Reset()
		inWord, quotedAt = false, -1
	}
	markQuoted := func() {
		if quotedAt < 0 {
			quotedAt = cur.Len()
		}
		inWord = true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flush()
		case c == '\'':
			markQuoted()
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, nil, fmt.Errorf("unterminated ' quote at byte %d", i)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			markQuoted()
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && strings.IndexByte("\"\\$`", s[j+1]) >= 0 {
					j++
				}
				cur.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, nil, fmt.Errorf("unterminated \" quote at byte %d", i)
			}
			i = j
		case c == '\\':
			if i+1 >= len(s) {
				return nil, nil, errors.New("a backslash ends the command: escape what?")
			}
			markQuoted()
			i++
			cur.WriteByte(s[i])
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	flush()
	return words, assign, nil
}

// CheckCommand reports whether an --mcp value can be split into a command,
// so that a typo is a usage error before anything starts.
func CheckCommand(command string) error {
	_, _, err := splitCommand(command)
	return err
}
