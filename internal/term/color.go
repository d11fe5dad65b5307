package term

import (
	"bytes"
	"io"
	"strings"
)

// Palette paints stderr's decoration (the status line, the "ask:" of an
// error, approval questions); stdout is data and never coloured. It is
// chosen once per run by ChooseColor; the zero Palette paints nothing.
type Palette struct{ On bool }

// SGR codes used.
const (
	sgrDim       = "2"
	sgrBoldRed   = "1;31"
	sgrBoldCyan  = "1;36"
	sgrResetCode = "\033[0m"
)

func (p Palette) paint(code, s string) string {
	if !p.On || s == "" {
		return s
	}
	// The reset comes before a closing newline: after it, a colour left on
	// would spill into whatever the terminal shows next.
	body, nl := strings.CutSuffix(s, "\n")
	end := sgrResetCode
	if nl {
		end += "\n"
	}
	return "\033[" + code + "m" + body + end
}

// Dim paints s dimmed, as the status line and the run's summary are.
func (p Palette) Dim(s string) string { return p.paint(sgrDim, s) }

// Failed paints a line about something that failed, such as a call.
func (p Palette) Failed(s string) string { return p.paint("31", s) }

// ErrorPrefix starts the line of an error that ends the run.
func (p Palette) ErrorPrefix() string { return p.paint(sgrBoldRed, "ask:") }

// Approvals paints the "ask:" that starts each approval question. The
// prompter writes each line with one call, so a prefix per write is enough.
func (p Palette) Approvals(w io.Writer) io.Writer {
	if !p.On {
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
	ColorAuto   = "auto"
	ColorAlways = "always"
	ColorNever  = "never"
)

// ChooseColor turns a --color setting into a Palette: "auto" colours a
// terminal stderr, unless NO_COLOR is set or TERM is dumb.
func ChooseColor(mode string, getenv func(string) string, errTTY bool) Palette {
	switch mode {
	case ColorAlways:
		return Palette{On: true}
	case ColorNever:
		return Palette{}
	}
	return Palette{On: errTTY && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"}
}
