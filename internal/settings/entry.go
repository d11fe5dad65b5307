package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Entry is one setting as `ask config` shows it: its value and where it
// came from.
type Entry struct {
	Name   string
	Value  any // nil when there is none
	Source string
}

// Shown is the entry's value in a table's cell: "-" for none, a list's
// items and a map's pairs (by key) joined by commas.
func (e Entry) Shown() string {
	switch v := e.Value.(type) {
	case nil:
		return "-"
	case []string:
		if len(v) == 0 {
			return "-"
		}
		return strings.Join(v, ", ")
	case map[string]string:
		if len(v) == 0 {
			return "-"
		}
		var pairs []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			pairs = append(pairs, k+"="+v[k])
		}
		return strings.Join(pairs, ", ")
	}
	return fmt.Sprint(e.Value)
}

// Entries encode as one JSON object, {NAME: {"value", "source"}}, whose
// keys keep the entries' order: the table's.
type Entries []Entry

func (o Entries) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, s := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(s.Name)
		entry, err := json.Marshal(struct {
			Value  any    `json:"value"`
			Source string `json:"source"`
		}{s.Value, s.Source})
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(entry)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ConfigKeys lists the config file's keys for the settings, from the rows
// that declare them, wrapped for --help.
func ConfigKeys() string {
	var b strings.Builder
	b.WriteString(" ")
	width := 1
	for _, r := range Rows() {
		if r.Key == "" {
			continue
		}
		word := " " + r.Key + ","
		if width+len(word) > 76 {
			b.WriteString("\n ")
			width = 1
		}
		b.WriteString(word)
		width += len(word)
	}
	return strings.TrimSuffix(b.String(), ",") + "\n  (a dotted key nests: tools.allow is {\"tools\": {\"allow\": [PATTERN...]}})"
}
