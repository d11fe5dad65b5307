package command

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "hello\nworld\n", "hello\nworld"},
		{"colours", "\x1b[1;32mgreen\x1b[0m text", "green text"},
		{"spinner with carriage returns", "⠋ \r⠙ \r⠹ \rThe answer.", "The answer."},
		{"spinner shorter than its line", "Loading model, please wait\rOK", "OK"},
		{"ollama style spinner", "\x1b[?25l⠙ \x1b[?25h\x1b[?25l\x1b[2K\x1b[1G⠹ \x1b[?25h\x1b[?25l\x1b[2K\x1b[1G\x1b[?25hHello!\n", "Hello!"},
		{"erase to end of line", "abcdef\x1b[3D\x1b[Kxy", "abcxy"},
		{"backspace", "ab\bc", "ac"},
		{"progress redrawn a line up", "pulling 10%\npulling 50%\x1b[1A\x1b[2K\rpulling 100%\n\nanswer", "pulling 100%\npulling 50%\nanswer"},
		{"clear screen", "noise\x1b[2Janswer", "answer"},
		{"window title", "\x1b]0;ollama\aanswer", "answer"},
		{"carriage return line ends", "one\r\ntwo\r\n", "one\ntwo"},
		{"ollama thinking block", "Thinking...\nThe user wants 6*7.\n...done thinking.\n\n42\n", "42"},
		{"thinking without its end stays", "Thinking... about it\nstill", "Thinking... about it\nstill"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"cursor right pads", "a\x1b[3Cb", "a   b"},
		{"unfinished escape", "answer\x1b[", "answer"},
	}
	for _, tt := range tests {
		if got := Clean([]byte(tt.in)); got != tt.want {
			t.Errorf("%s: Clean(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"\x1b[1;32mx\x1b[0m", "⠋ \rok", "a\x1b[2A\x1b[5Gb\x1b[J", "\x1b]0;t\x1b\\x", "Thinking...\n...done thinking.\nx", "a\b\b\bb"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := Clean(in)
		if !utf8.ValidString(out) {
			t.Errorf("invalid UTF-8 from %q", in)
		}
		if strings.ContainsAny(out, "\x1b\r\b") {
			t.Errorf("control characters left in %q (from %q)", out, in)
		}
		for _, r := range out {
			if r >= 0x2800 && r <= 0x28FF {
				t.Errorf("braille left in %q", out)
			}
		}
	})
}
