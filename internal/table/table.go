// Package table shows ask's lists to a person: aligned columns under a
// header, for a terminal's stdout. In a pipe the commands print JSON
// instead, and never come here.
package table

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ask-cli/ask/internal/termtext"
)

// Print prints rows under a header, in columns, for a person.
func Print(w io.Writer, header []string, rows ...[]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, row := range append([][]string{header}, rows...) {
		cells := make([]string, len(row))
		for i, c := range row {
			// A provider's or a server's text: nothing in it may drive the
			// terminal (OSC 52 sets the clipboard).
			cells[i] = termtext.Safe(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// OrDash is s, or "-" for an empty cell.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// YesNo is a boolean cell.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
