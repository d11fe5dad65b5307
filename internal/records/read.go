package records

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Read parses a JSONL transcript. A malformed line is an error naming its
// line number, returned with the events before it.
func Read(r io.Reader) ([]Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	var events []Event
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return events, fmt.Errorf("transcript line %d: %w", n, err)
		}
		if ev.Type == "" {
			return events, fmt.Errorf("transcript line %d: event has no type", n)
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		return events, fmt.Errorf("read transcript: %w", err)
	}
	if len(events) == 0 || events[0].Type != TypeRunStarted {
		return events, fmt.Errorf("transcript does not start with a %s event", TypeRunStarted)
	}
	return events, nil
}

// ReadFile reads the transcript at path as Read does, a fault in it named
// with the path; the events before a fault come with it.
func ReadFile(path string) ([]Event, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	events, err := Read(bytes.NewReader(data))
	if err != nil {
		return events, fmt.Errorf("%s: %w", path, err)
	}
	return events, nil
}
