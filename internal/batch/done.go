package batch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Done is what a result file already holds: for each task its last
// result, which says whether a rerun skips the task or runs it again.
type Done struct {
	ids   map[string]prior
	lines map[int]prior // lines without an id, reported already
	// RetryFailed runs again the tasks whose result did not answer.
	RetryFailed bool
	// Count and Failed count the tasks there, and those not answered.
	Count, Failed int
	// Duplicates says an id has more than one final line (a run killed
	// before it rewrote the file): Compact leaves its last.
	Duplicates bool
}

// prior is a task's last result in the file.
type prior struct {
	code              int
	answered, refused bool // refused: its line could not be run (invalid)
}

// Verdict is what a rerun does with a task the file may hold.
type Verdict int

const (
	// Fresh: the file holds no result for it.
	Fresh Verdict = iota
	// Skip: its result is there.
	Skip
	// SkipFailed: its result is a failure, kept without --retry-failed.
	SkipFailed
	// Retry: it failed and runs again (--retry-failed).
	Retry
	// Refix: its line was refused before and reads now: it runs.
	Refix
)

// Task is the verdict for a task whose line reads now.
func (d *Done) Task(id string) (Verdict, int) {
	if d == nil {
		return Fresh, 0
	}
	p, ok := d.ids[id]
	switch {
	case !ok:
		return Fresh, 0
	case p.answered:
		return Skip, p.code
	case p.refused:
		return Refix, p.code
	case d.RetryFailed:
		return Retry, p.code
	}
	return SkipFailed, p.code
}

// Refused reports whether a line that cannot be run now was reported
// already (by its id, or by its number when it has none), and its code.
func (d *Done) Refused(id string, line int) (bool, int) {
	if d == nil {
		return false, 0
	}
	p, ok := d.ids[id]
	if id == "" {
		p, ok = d.lines[line]
	}
	return ok, p.code
}

// HasID reports whether the task id has its result.
func (d *Done) HasID(id string) bool {
	if d == nil {
		return false
	}
	_, ok := d.ids[id]
	return ok
}

func (d *Done) add(r Result) {
	if r.Status == StatusPending {
		return // its final line follows, or a rerun runs it
	}
	p := prior{code: r.ExitCode, answered: r.Answered(), refused: r.Status == StatusInvalid}
	switch {
	case r.ID != "":
		if old, dup := d.ids[r.ID]; dup {
			d.Duplicates = true
			d.Count--
			if !old.answered {
				d.Failed--
			}
		}
		d.ids[r.ID] = p
	case r.Line > 0:
		d.lines[r.Line] = p
	}
	d.Count++
	if !p.answered {
		d.Failed++
	}
}

// ReadDone reads result lines from r. keep is the length of the whole
// lines that are results: what follows (a torn last line) is to be cut.
// A line that is not a result before the last is an error: the file is
// not ask's. No line is held past MaxLine, so a file of one huge line
// costs no more memory than a task line may.
func ReadDone(r io.Reader) (done *Done, keep int64, err error) {
	done = &Done{ids: map[string]prior{}, lines: map[int]prior{}}
	br := bufio.NewReaderSize(r, 64<<10)
	var pending error // a bad line, an error unless it is the last
	var head []byte   // the start of the line read
	for n := 1; ; n++ {
		line, size, tooLong, err := readRecord(br, &head)
		if size == 0 && err == io.EOF {
			return done, keep, pending
		}
		if err != nil && err != io.EOF {
			return nil, 0, err
		}
		if pending != nil {
			return nil, 0, pending
		}
		var res Result
		whole := err == nil
		switch {
		case tooLong:
			pending = fmt.Errorf("line %d is longer than %d MiB: not a result line of ask batch", n, MaxLine>>20)
		case !whole || json.Unmarshal(line, &res) != nil || res.ID == "" && res.Line == 0:
			pending = fmt.Errorf("line %d is not a result line of ask batch", n)
		}
		if pending != nil {
			if !whole && (keep > 0 || tornResult(head)) {
				return done, keep, nil // torn by a crash: cut it
			}
			if !whole {
				// A file of one line that is no result: someone's file
				// (a token), which is never cut.
				return nil, 0, pending
			}
			continue
		}
		done.add(res)
		keep += size
	}
}

// tornResult reports whether the start of a last line without its newline
// is what a crash leaves of a result line: JSON begun, or zeros.
func tornResult(head []byte) bool {
	return len(head) > 0 && (head[0] == '{' || bytes.Count(head, []byte{0}) == len(head))
}

// readRecord reads one line, newline included in size but not in line;
// a line past MaxLine is read to its end and not kept (tooLong). err is
// io.EOF for a last line without its newline. head, when not nil, gets
// the line's first bytes, kept even when the line is not.
func readRecord(br *bufio.Reader, head *[]byte) (line []byte, size int64, tooLong bool, err error) {
	if head != nil {
		*head = (*head)[:0]
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if head != nil && len(*head) < 16 {
			*head = append(*head, chunk[:min(len(chunk), 16-len(*head))]...)
		}
		size += int64(len(chunk))
		if !tooLong {
			if len(line)+len(chunk) > MaxLine {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil {
			line = line[:max(len(line)-1, 0)]
		}
		return line, size, tooLong, err
	}
}
