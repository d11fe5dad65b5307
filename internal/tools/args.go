package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// decodeArgs unmarshals a call's arguments; empty arguments mean {}.
func decodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

// optInt is an optional integer argument. JSON Schema counts 2.0 as an
// integer, so integral floats are accepted too; null means unset.
type optInt struct {
	set bool
	v   int
}

func (o *optInt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = optInt{}
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("want an integer, got %s", b)
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<40 {
		return fmt.Errorf("want an integer, got %s", b)
	}
	*o = optInt{set: true, v: int(f)}
	return nil
}

// binarySniffLen is how much of a file is checked for NUL bytes to decide
// that it is binary (the heuristic git and grep use).
const binarySniffLen = 8 * 1024

func looksBinary(head []byte) bool {
	if len(head) > binarySniffLen {
		head = head[:binarySniffLen]
	}
	return bytes.IndexByte(head, 0) >= 0
}

// readLine reads the next line from br without its line ending, keeping at
// most max bytes of it in buf (reused) and streaming past the rest, so that a
// single huge line costs no memory. n is the line's full length without the
// line ending. At the end of input it returns io.EOF.
func readLine(br *bufio.Reader, buf []byte, max int) (line []byte, n int, err error) {
	buf = buf[:0]
	var last2 [2]byte // the final two bytes seen, to strip "\r\n"
	read := 0
	for {
		chunk, err := br.ReadSlice('\n')
		read += len(chunk)
		if room := max - len(buf); room > 0 {
			buf = append(buf, chunk[:min(room, len(chunk))]...)
		}
		switch {
		case len(chunk) >= 2:
			last2 = [2]byte{chunk[len(chunk)-2], chunk[len(chunk)-1]}
		case len(chunk) == 1:
			last2 = [2]byte{last2[1], chunk[0]}
		}
		switch {
		case err == nil: // ends with '\n'
			n = read - 1
			if last2[0] == '\r' {
				n--
			}
			return buf[:min(len(buf), n)], n, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if read == 0 {
				return buf, 0, io.EOF
			}
			return buf, read, nil
		default:
			return buf, read, err
		}
	}
}

// cutRunes shortens s to at most max bytes without splitting a UTF-8
// sequence.
func cutRunes(s []byte, max int) []byte {
	if len(s) <= max {
		return s
	}
	s = s[:max]
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRune(s[i:]) {
				s = s[:i]
			}
			break
		}
	}
	return s
}

// appendLine appends a line of full length n, of which line holds the
// start, cut at max bytes with a marker saying so.
func appendLine(dst, line []byte, n, max int) []byte {
	if n <= max && len(line) == n {
		return append(dst, line...)
	}
	shown := cutRunes(line, max)
	dst = append(dst, shown...)
	return fmt.Appendf(dst, "… [line truncated: %d of %d bytes shown]", len(shown), n)
}

// validText makes output safe to embed in JSON without silent replacement
// by the encoder at an unknown place.
func validText(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}
