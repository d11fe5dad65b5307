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

// IndexVars are the variables an engine sets to a task's index in an
// array of them, read by --shard auto/N in this order: Kubernetes Indexed
// Jobs, Slurm job arrays, AWS Batch array jobs, Cloud Run jobs.
var IndexVars = []string{"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "AWS_BATCH_JOB_ARRAY_INDEX", "CLOUD_RUN_TASK_INDEX"}

// ParseShard reads "I/N", 0 ≤ I < N, or "auto/N", whose I is the first of
// IndexVars that getenv finds set. N is always the user's: an engine
// changes its count when one index is resubmitted.
func ParseShard(s string, getenv func(string) string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	i = strings.TrimSpace(i)
	from := ""
	if i == "auto" && getenv != nil {
		for _, name := range IndexVars {
			if v := strings.TrimSpace(getenv(name)); v != "" {
				i, from = v, name
				break
			}
		}
		if from == "" {
			return Shard{}, fmt.Errorf("--shard %s: no engine's index is set: auto reads %s; give I/N instead", s, strings.Join(IndexVars, ", "))
		}
	}
	si, err1 := strconv.Atoi(i)
	sn, err2 := strconv.Atoi(strings.TrimSpace(n))
	switch {
	case from != "" && err1 != nil:
		return Shard{}, fmt.Errorf("--shard %s: %s=%q is not a whole number", s, from, i)
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("--shard %q: give I/N, such as 0/4 (shard 0 of 4), or auto/N", s)
	case sn < 1:
		return Shard{}, fmt.Errorf("--shard %q: N must be at least 1", s)
	case from != "" && (si < 0 || si >= sn):
		return Shard{}, fmt.Errorf("--shard %s: %s=%d, but shards of %d are numbered 0 to %d: give the array as many indexes as N, from 0", s, from, si, sn, sn-1)
	case si < 0 || si >= sn:
		return Shard{}, fmt.Errorf("--shard %q: I must be from 0 to %d", s, sn-1)
	}
	return Shard{I: si, N: sn}, nil
}

// String is "I/N", "" for every task.
func (s Shard) String() string {
	if s.N <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
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
