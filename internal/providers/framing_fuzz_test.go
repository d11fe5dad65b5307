package providers

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// byteReader hands out its data n bytes per Read, as a slow network does.
type byteReader struct {
	data []byte
	n    int
}

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := min(r.n, len(p), len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

// referenceSSE is the SSE framing written as plainly as possible, over the
// whole input at once: the oracle that ReadSSE, fed in pieces, must match.
func referenceSSE(in []byte) []Event {
	var out []Event
	var name string
	var data []byte
	has := false
	flush := func() {
		if has {
			out = append(out, Event{Name: name, Data: data})
		}
		name, data, has = "", nil, false
	}
	for _, line := range bytes.Split(in, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			flush()
		case line[0] == ':':
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "event":
				name = string(value)
			case "data":
				if has {
					data = append(data, '\n')
				}
				data = append(data, value...)
				has = true
			}
		}
	}
	flush()
	return out
}

func referenceNDJSON(in []byte) [][]byte {
	var out [][]byte
	for _, line := range bytes.Split(in, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			out = append(out, line)
		}
	}
	return out
}

func sameEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

// splitRead delivers body in two parts cut at split, the second n bytes per
// Read.
func splitRead(body []byte, split uint32, n uint8) io.Reader {
	k := int(split % uint32(len(body)+1))
	return io.MultiReader(bytes.NewReader(body[:k]), &byteReader{data: body[k:], n: int(n) + 1})
}

// FuzzReadSSE feeds streams (the recorded fixtures, cut and mutated) to
// ReadSSE in two parts, the second in small reads. It must not panic and
// must find exactly the events the plain reference framing finds.
func FuzzReadSSE(f *testing.F) {
	f.Add([]byte("event: a\ndata: 1\ndata: 2\n\n: comment\r\ndata:x\r\n\r\ndata"), uint32(9), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, split uint32, n uint8) {
		var got []Event
		err := ReadSSE(splitRead(body, split, n), func(ev Event) error {
			got = append(got, ev)
			return nil
		})
		if err != nil {
			t.Fatalf("ReadSSE: %v", err)
		}
		if want := referenceSSE(body); !sameEvents(got, want) {
			t.Fatalf("ReadSSE found %q, the reference %q", got, want)
		}
	})
}

// FuzzReadNDJSON does the same for ReadNDJSON.
func FuzzReadNDJSON(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n\n  {\"b\":2}\r\n{\"c\""), uint32(5), uint8(2))
	f.Fuzz(func(t *testing.T, body []byte, split uint32, n uint8) {
		var got [][]byte
		err := ReadNDJSON(splitRead(body, split, n), func(ev Event) error {
			got = append(got, bytes.Clone(ev.Data))
			return nil
		})
		if err != nil {
			t.Fatalf("ReadNDJSON: %v", err)
		}
		want := referenceNDJSON(body)
		if len(got) != len(want) {
			t.Fatalf("ReadNDJSON found %q, the reference %q", got, want)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("line %d: %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// longLine is an SSE stream whose one event is size bytes of data.
func longLine(size int) []byte {
	return []byte("data: " + strings.Repeat("x", size) + "\n\ndata: end\n\n")
}

// A long line that trickles in a byte at a time is read whole. How long
// it takes is BenchmarkReadSSELongLine's to show (ns/byte stays flat as
// the line grows; with bufio.Scanner, which ReadSSE used to use, this test
// took over a minute): tests do not time. What a test can check exactly is
// memory: the bytes allocated must grow in proportion to the line, as they
// do when the pending line is appended to rather than copied on each read.
func TestReadSSELongLineByteByByte(t *testing.T) {
	read := func(size int) func() {
		body := longLine(size)
		return func() {
			var got []Event
			err := ReadSSE(&byteReader{data: body, n: 1}, func(ev Event) error {
				got = append(got, ev)
				return nil
			})
			if err != nil || len(got) != 2 || len(got[0].Data) != size || string(got[1].Data) != "end" {
				t.Fatalf("%d bytes: got %d events, err %v", size, len(got), err)
			}
			if bytes.IndexFunc(got[0].Data, func(r rune) bool { return r != 'x' }) >= 0 {
				t.Fatalf("%d bytes: the event's data is not the line's", size)
			}
		}
	}
	// Appending grows the pending line by doubling and then by a quarter,
	// which allocates about five times the line in all; copying it on each
	// read would allocate half the line per byte.
	const perByte = 8
	for _, size := range []int{256 << 10, 2 << 20} {
		got := float64(bytesAllocated(read(size))) / float64(size)
		t.Logf("%d KB line: %.1f bytes allocated per byte", size>>10, got)
		if got > perByte {
			t.Errorf("a %d KB line allocates %.1f bytes per byte; want at most %d", size>>10, got, perByte)
		}
	}
}

// A short reply's reader allocates a few pages, not 64 KB: every answer
// reads one, and a one-shot answer pays for each page it touches.
func TestShortReplyReadsInASmallBuffer(t *testing.T) {
	body := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"Hello.\"}}]}\n\ndata: [DONE]\n\n")
	got := bytesAllocated(func() {
		if err := ReadSSE(bytes.NewReader(body), func(Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
	})
	const most = 32 << 10
	if got > most {
		t.Errorf("a %d-byte reply allocated %d bytes; want at most %d", len(body), got, most)
	}
}

// bytesAllocated is what one run of f allocates on the heap.
func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestLineReader(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr error
	}{
		{"a\nb\n", []string{"a", "b"}, nil},
		{"a\n\nlast", []string{"a", "", "last"}, nil},
		{"", nil, nil},
		{strings.Repeat("y", 300) + "\nz", []string{strings.Repeat("y", 300), "z"}, nil},
		{"ok\n" + strings.Repeat("y", 1001) + "\n", []string{"ok"}, ErrEventTooLarge},
		{strings.Repeat("y", 1001), nil, ErrEventTooLarge},
	}
	for _, tt := range tests {
		// A 16-byte buffer (bufio's least) makes every long line take the
		// slow path.
		l := &lineReader{br: bufio.NewReaderSize(&byteReader{data: []byte(tt.in), n: 3}, 16), max: 1000}
		var got []string
		var err error
		for {
			var line []byte
			if line, err = l.next(); err != nil {
				break
			}
			got = append(got, string(line))
		}
		if err == io.EOF {
			err = nil
		}
		if !slices.Equal(got, tt.want) || !errors.Is(err, tt.wantErr) {
			t.Errorf("%.20q: lines %q, err %v; want %q, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestReadersRefuseHugeLines(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MB")
	}
	huge := io.MultiReader(strings.NewReader("data: "), &repeatReader{n: maxEventSize + 1})
	if err := ReadSSE(huge, func(Event) error { return nil }); !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("err = %v, want ErrEventTooLarge", err)
	}
}

// repeatReader gives n bytes of 'x' without a line end.
type repeatReader struct{ n int }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// BenchmarkReadSSELongLine reads one long event a byte at a time. The time
// per byte stays flat as the line grows (linear in all); with
// bufio.Scanner it grew with the line's length.
func BenchmarkReadSSELongLine(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10, 1 << 20} {
		body := longLine(size)
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				ReadSSE(&byteReader{data: body, n: 1}, func(Event) error { return nil })
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(body)), "ns/byte")
		})
	}
}
