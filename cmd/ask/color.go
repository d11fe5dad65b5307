package main

import (
	"bytes"
	"io"
)

// Colour is decoration on stderr only (the status line, the "ask:" of an
// error, approval questions); stdout is data and never coloured. It is
// chosen once per run by chooseColor.

// palette paints stderr decoration; the zero palette paints nothing.
type palette struct{ on bool }

// SGR codes used.
const (
	sgrDim       = "2"
	sgrBoldRed   = "1;31"
	sgrBoldCyan  = "1;36"
	sgrResetCode = "\033[0m"
)

func (p palette) paint(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\033[" + code + "m" + s + sgrResetCode
}

// errorPrefix starts the line of an error that ends the run.
func (p palette) errorPrefix() string { return p.paint(sgrBoldRed, "ask:") }

// approvals paints the "ask:" that starts each approval question. The
// prompter writes each line with one call, so a prefix per write is enough.
func (p palette) approvals(w io.Writer) io.Writer {
	if !p.on {
		return w
	}
	return prefixPainter{w: w, prefix: []byte("ask:"), painted: []byte(p.paint(sgrBoldCyan, "ask:"))}
}

type prefixPainter struct {
	w               io.Writer
	prefix, painted []byte
}

func (pp prefixPainter) Write(b []byte) (int, error) {
	if !bytes.HasPrefix(b, pp.prefix) {
		return pp.w.Write(b)
	}
	if _, err := pp.w.Write(append(append([]byte{}, pp.painted...), b[len(pp.prefix):]...)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Values of --color.
const (
	colorAuto   = "auto"
	colorAlways = "always"
	colorNever  = "never"
)

// colorChoice is the --color setting with where it came from.
type colorChoice struct {
	mode   string // auto, always or never
	source string
}

// chooseColor turns the --color setting (see colorSetting) into a
// palette: "auto" colours a terminal stderr, unless NO_COLOR is set or
// TERM is dumb.
func chooseColor(choice colorChoice, getenv func(string) string, errTTY bool) palette {
	switch choice.mode {
	case colorAlways:
		return palette{on: true}
	case colorNever:
		return palette{}
	}
	return palette{on: errTTY && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"}
}
