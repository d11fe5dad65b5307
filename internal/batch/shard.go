package batch

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is shard I of N: the tasks whose id hashes to I. The zero Shard
// takes every task.
type Shard struct{ I, N int }

// ParseShard reads "I/N", 0 ≤ I < N.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	si, err1 := strconv.Atoi(strings.TrimSpace(i))
	sn, err2 := strconv.Atoi(strings.TrimSpace(n))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("--shard %q: give I/N, such as 0/4 (shard 0 of 4)", s)
	case sn < 1:
		return Shard{}, fmt.Errorf("--shard %q: N must be at least 1", s)
	case si < 0 || si >= sn:
		return Shard{}, fmt.Errorf("--shard %q: I must be from 0 to %d", s, sn-1)
	}
	return Shard{I: si, N: sn}, nil
}

// Takes reports whether the task id belongs to the shard: FNV-1a of the
// id, modulo N. The hash is fixed, so every machine agrees on it.
func (s Shard) Takes(id string) bool {
	if s.N <= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()%uint64(s.N) == uint64(s.I)
}
