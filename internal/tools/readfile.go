package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ask-cli/ask/internal/noblock"
	"github.com/ask-cli/ask/internal/termtext"
)

// Output caps of read_file: whichever is reached first ends the page.
const (
	readMaxLines   = 2000
	readMaxBytes   = 50 * 1024
	readMaxLineLen = 2000
)

type readFile struct{ root *Root }

func (readFile) Info() Info {
	return Info{
		Name:        "read_file",
		Description: "Read a text file as numbered lines \"N: text\". At most 2000 lines or 50 KB per call; use offset to continue.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","minLength":1},` +
			`"offset":{"type":"integer","minimum":1,"description":"first line, 1-based"},` +
			`"limit":{"type":"integer","minimum":1,"description":"max lines"}},` +
			`"required":["path"]}`),
		Risk: Read,
	}
}

func (t readFile) Run(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		Path   string `json:"path"`
		Offset optInt `json:"offset"`
		Limit  optInt `json:"limit"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return "", err
	}
	offset, limit := 1, readMaxLines
	if args.Offset.set {
		offset = args.Offset.v
	}
	if args.Limit.set {
		limit = min(args.Limit.v, readMaxLines)
	}

	osRoot, rel, err := t.root.openRel(args.Path, false)
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	defer osRoot.Close()
	f, info, err := noblock.OpenIn(osRoot, rel)
	if err != nil {
		return "", fmt.Errorf("read_file: %q: %w", args.Path, unwrapPathError(err))
	}
	defer f.Close()
	if info.IsDir() {
		return "", fmt.Errorf("read_file: %q is a directory; use list_directory to see its entries", args.Path)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("read_file: %q is not a regular file (%s)", args.Path, info.Mode().Type())
	}

	br := bufio.NewReaderSize(f, 64*1024)
	head, err := br.Peek(binarySniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", fmt.Errorf("read_file: %q: %w", args.Path, err)
	}
	if looksBinary(head) {
		return "", fmt.Errorf("read_file: %q is a binary file (it has NUL bytes); read_file only shows text", args.Path)
	}
	if text, ok, err := t.root.readText(ctx, rel); ok {
		if err != nil {
			return "", fmt.Errorf("read_file: %q: the editor: %w", args.Path, err)
		}
		br = bufio.NewReader(bytes.NewReader(text))
	}
	out, err := pageLines(ctx, br, offset, limit)
	if err != nil {
		return "", fmt.Errorf("read_file: %q: %w", args.Path, err)
	}
	return out, nil
}

// pageLines renders lines offset..offset+limit-1 of br as "N: text", within
// readMaxBytes, then streams on to count the lines left so that the closing
// note can say exactly how to read the rest.
func pageLines(ctx context.Context, br *bufio.Reader, offset, limit int) (string, error) {
	var sb strings.Builder
	sb.Grow(readMaxBytes + 256)
	var (
		buf     = make([]byte, 0, readMaxLineLen+1)
		entry   = make([]byte, 0, readMaxLineLen+128)
		lineNo  int  // lines consumed so far
		shown   int  // lines written
		byBytes bool // the byte cap ended the page
		more    bool // a line after the page exists (and was consumed)
	)
	for {
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		line, n, err := readLine(br, buf, readMaxLineLen+1)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		lineNo++
		if lineNo < offset {
			continue
		}
		if shown == limit {
			more = true
			break
		}
		// Build the entry in a reused buffer: no allocation per line.
		entry = strconv.AppendInt(entry[:0], int64(lineNo), 10)
		entry = append(entry, ": "...)
		entry = appendLine(entry, line, n, readMaxLineLen)
		entry = append(entry, '\n')
		if shown > 0 && sb.Len()+len(entry) > readMaxBytes {
			more, byBytes = true, true
			break
		}
		sb.Write(entry)
		shown++
	}
	if lineNo == 0 {
		return "(empty file)", nil
	}
	if shown == 0 {
		return "", fmt.Errorf("offset %d is past the end of the file (%s)", offset, termtext.Plural(lineNo, "line", "lines"))
	}
	if !more {
		return validText(strings.TrimSuffix(sb.String(), "\n")), nil
	}
	rest, err := countLines(ctx, br)
	if err != nil {
		return "", err
	}
	total := lineNo + rest
	first, last := offset, offset+shown-1
	prefix := "truncated: "
	if !byBytes && limit < readMaxLines {
		prefix = "" // the caller asked for this page size
	}
	fmt.Fprintf(&sb, "[%slines %d-%d of %d shown; call read_file with offset %d to continue]", prefix, first, last, total, last+1)
	return validText(sb.String()), nil
}

// countLines counts the lines left in br by streaming through it.
func countLines(ctx context.Context, br *bufio.Reader) (int, error) {
	buf := make([]byte, 32*1024)
	count, seen, endsWithNewline := 0, false, false
	for i := 0; ; i++ {
		if i%256 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		n, err := br.Read(buf)
		if n > 0 {
			count += bytes.Count(buf[:n], []byte{'\n'})
			seen, endsWithNewline = true, buf[n-1] == '\n'
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if seen && !endsWithNewline {
		count++
	}
	return count, nil
}
