// Package term is ask's presentation on a terminal's stderr: the live
// status line, the approval questions asked on the controlling terminal,
// and the colours that decorate them. stdout is data and never passes
// through here.
package term
