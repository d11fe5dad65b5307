package undo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
)

// base85 is git's alphabet for binary patches (not Ascii85's).
const base85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// blobID is the id git gives content: the SHA-1 of a blob object. A
// binary patch names both sides by it, and git apply checks the file it
// patches against the first.
func blobID(content []byte) string {
	if content == nil {
		return "0000000000000000000000000000000000000000"
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// binaryPatch writes the body of a git binary patch from before to after
// (nil for a file that is not there): the full index line, then each side
// whole, deflated, in base85 lines ("literal" hunks), forward then
// reverse, as git diff --binary writes them.
func binaryPatch(w *bytes.Buffer, before, after []byte) {
	fmt.Fprintf(w, "index %s..%s\nGIT binary patch\n", blobID(before), blobID(after))
	literal(w, after)
	literal(w, before)
}

func literal(w *bytes.Buffer, content []byte) {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(content) // a bytes.Buffer takes every write
	zw.Close()
	fmt.Fprintf(w, "literal %d\n", len(content))
	data := z.Bytes()
	for len(data) > 0 {
		n := min(52, len(data))
		// The line's length: A-Z for 1-26 bytes, a-z for 27-52.
		if n <= 26 {
			w.WriteByte(byte('A' + n - 1))
		} else {
			w.WriteByte(byte('a' + n - 27))
		}
		encode85(w, data[:n])
		w.WriteByte('\n')
		data = data[n:]
	}
	w.WriteByte('\n')
}

// encode85 writes b in git's base85, four bytes (zero-padded) as five
// characters, the most significant first.
func encode85(w *bytes.Buffer, b []byte) {
	for len(b) > 0 {
		var acc uint32
		for i := 0; i < 4; i++ {
			acc <<= 8
			if i < len(b) {
				acc |= uint32(b[i])
			}
		}
		var out [5]byte
		for i := 4; i >= 0; i-- {
			out[i] = base85[acc%85]
			acc /= 85
		}
		w.Write(out[:])
		b = b[min(4, len(b)):]
	}
}
