package batch

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"strings"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/termtext"
)

// Pin is what a result file is made for: a task file and a shard of it.
//
// The task file is known by the hash of its task ids, not of its text: a
// line fixed after it was refused (an unknown key, a bad value) keeps its
// id, so the same file, mended, is the same file to its results and its
// task runs again; another file, or one with tasks added or taken away,
// is not, and its results would mix with the wrong ones.
type Pin struct {
	// Tasks names the task file as given ("-" for stdin); IDs is the hash
	// of its ids, "" when it was not read first (stdin), which pins the
	// shard only.
	Tasks string `json:"tasks"`
	IDs   string `json:"task_ids_sum_sha256,omitempty"`
	Count int    `json:"tasks_count,omitempty"`
	Shard string `json:"shard,omitempty"`
}

// pinVersion is the form of FILE.state this ask writes and reads.
const pinVersion = 1

type pinFile struct {
	Version int `json:"version"`
	Pin
}

// maxPinFile bounds what is read of FILE.state: it is a few lines.
const maxPinFile = 64 << 10

// TaskIDs reads a task file's ids, for its Pin, and counts the tasks of
// the shard. An id is read from a line that is not a task too, where it
// can be, so that mending the line keeps its id. The hash is the sum of
// each id's SHA-256 (modulo 2^256): the same whatever the order of the
// lines, and read in one pass holding no id.
func TaskIDs(r io.Reader, shard Shard) (hash string, tasks, inShard int, err error) {
	var sum [4]uint64 // a 256-bit sum, in four words, low first
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br)
		if err != nil && err != io.EOF {
			return "", 0, 0, fmt.Errorf("read the tasks: %w", err)
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, byteOrderMark)
		}
		if !tooLong && len(bytes.TrimSpace(line)) > 0 {
			id := LineID(line)
			if id != "" {
				addHash(&sum, sha256.Sum256([]byte(id)))
				tasks++
			}
			if shard.Takes(shardKey(id, n)) {
				inShard++
			}
		}
		if err == io.EOF {
			break
		}
	}
	var out [32]byte
	for i, w := range sum {
		binary.BigEndian.PutUint64(out[24-8*i:], w)
	}
	return hex.EncodeToString(out[:]), tasks, inShard, nil
}

// addHash adds h, a big-endian 256-bit number, to sum.
func addHash(sum *[4]uint64, h [32]byte) {
	var carry uint64
	for i := range sum {
		sum[i], carry = bits.Add64(sum[i], binary.BigEndian.Uint64(h[24-8*i:]), carry)
	}
}

// LineID is the id a task line gives, "" where none can be read: the
// value of its top-level "id" key when that comes before anything that
// is not JSON.
func LineID(line []byte) string {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if tok == "id" {
			var id string
			if dec.Decode(&id) != nil {
				return ""
			}
			return id
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// checkPin compares the pin kept beside the result file at path with
// want, and keeps want there when none is kept. A file made for another
// shard or another task file is refused, naming both.
func checkPin(path string, want Pin) error {
	statePath := path + ".state"
	f, err := openNoFollow(statePath, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return savePin(statePath, want)
	}
	if err != nil {
		return fmt.Errorf("--output %s: its state: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPinFile+1))
	f.Close()
	if err != nil {
		return fmt.Errorf("--output %s: its state: %w", path, err)
	}
	var kept pinFile
	switch {
	case len(data) > maxPinFile:
		err = fmt.Errorf("longer than %d KiB", maxPinFile>>10)
	default:
		if err = json.Unmarshal(data, &kept); err == nil && kept.Version != pinVersion {
			err = fmt.Errorf("written by another version of ask (form %d, this one reads %d)", kept.Version, pinVersion)
		}
	}
	if err != nil {
		return fault.Usagef("--output %s: its state %s is not one ask batch reads (%v): remove it and rerun, or give another --output", path, statePath, err)
	}
	made, now := kept.describe(), want.describe()
	switch {
	case kept.Shard != want.Shard:
		return fault.Usagef("--output %s was made for %s, but this run is %s: give --shard %s, or another --output", path, made, now, orAll(kept.Shard))
	case kept.IDs != "" && want.IDs != "" && kept.IDs != want.IDs:
		return fault.Usagef("--output %s was made for %s, but this run is %s, whose task ids differ: give that task file, or another --output (a mended line keeps its id and is no change; if this is the same file with ids added, remove %s to pin the file to it)", path, made, now, statePath)
	case kept.IDs == "" && want.IDs != "" || kept.Tasks != want.Tasks && want.IDs != "":
		return savePin(statePath, want) // known better now
	}
	return nil
}

func orAll(shard string) string {
	if shard == "" {
		return "0/1"
	}
	return shard
}

// describe names the pin for an error: "shard 0/4 of tasks.jsonl (200 tasks)".
func (p Pin) describe() string {
	what := "all of "
	if p.Shard != "" {
		what = "shard " + p.Shard + " of "
	}
	name := quoteName(termtext.Safe(p.Tasks))
	if p.Tasks == "-" || p.Tasks == "" {
		name = "the tasks on stdin"
	}
	if p.Count > 0 {
		name += fmt.Sprintf(" (%d tasks)", p.Count)
	}
	return what + name
}

func quoteName(s string) string {
	if strings.ContainsAny(s, " \t") {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// savePin keeps p at path, whole or not at all, never through a link.
func savePin(path string, p Pin) error {
	data, err := json.MarshalIndent(pinFile{Version: pinVersion, Pin: p}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("keep %s: %w", path, err)
	}
	_, err = tmp.Write(append(data, '\n'))
	if err = errors.Join(err, tmp.Sync(), tmp.Close()); err == nil {
		err = os.Rename(tmp.Name(), path) // a link at path is replaced, never followed
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("keep %s: %w", path, err)
	}
	return nil
}
