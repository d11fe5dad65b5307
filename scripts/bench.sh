#!/usr/bin/env bash
# End-to-end benchmarks of ask against a local fake provider: builds ask as
# a release would be built, builds the fake provider, the measuring program
# and the loop's benchmarks, and prints markdown tables of medians (the
# tables BENCHMARKS.md holds). Run from anywhere in the repo; needs only Go
# (and git, to name the commit measured).
#   scripts/bench.sh                 10 runs of each scenario (the least)
#   RUNS=30 scripts/bench.sh         more runs
#   ROUNDS=20 scripts/bench.sh       more rounds of the start scenarios (10)
#   TAGS= scripts/bench.sh           measure the build without urfave_cli_no_docs
#   TAGS=a,b scripts/bench.sh        measure another build variant
# The measuring is done by scripts/benchrun (Go): wall time from fork-exec
# to wait, CPU time and peak RSS from the kernel's rusage of ask (what
# /usr/bin/time reports as %U+%S and %M, and benchrun cross-checks the RSS
# of every scenario with /usr/bin/time when it is installed), request
# times and sizes from the fake provider's log, and the cost of building a
# request from 10× the messages from BenchmarkBuildRequestGrowth; ask's
# start against scripts/floor's (--version, a one-shot answer, the 5-step
# loop), the two run in turn, as ratios of medians, and the floor built on
# ask's stack (-tags stack) beside them. The start is measured in rounds,
# each after the first with fresh copies in a fresh work directory, and
# its ratios are the median over them: one round's ratio strays from the
# next by more than a limit's margin.
# hyperfine is not needed.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-10}
rounds=${ROUNDS:-10}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

# urfave_cli_no_docs leaves out urfave/cli's man and markdown generators,
# and with them blackfriday, whose package init costs every run (0.4 ms,
# 760 allocations). ask prints its help without them; the build is checked
# to give the same --help before it is measured.
tags=${TAGS-urfave_cli_no_docs}
# main.version is stamped with the commit measured, since GOFLAGS may turn
# off Go's own VCS stamping (-buildvcs=false). Only reading git: no
# describe --dirty, which may rewrite the index of a shared checkout.
ver=$(git rev-parse --short HEAD 2>/dev/null || echo dev)
if [ -n "$(git --no-optional-locks status --porcelain 2>/dev/null)" ]; then
  ver=$ver-dirty
fi
ldflags="-s -w -X main.version=$ver"

echo "== building (CGO_ENABLED=0 go build -trimpath -tags $tags -ldflags '$ldflags')" >&2
# CGO_ENABLED=0: the one static binary the README builds and ask promises.
CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$bin/ask" ./cmd/ask
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/ask-docs" ./cmd/ask
if ! cmp -s <("$bin/ask" --help) <("$bin/ask-docs" --help); then
  echo "bench.sh: ask --help differs with -tags $tags; measuring the default build instead" >&2
  mv "$bin/ask-docs" "$bin/ask"
fi
# The floor, a tool-calling loop in 150 lines of the standard library, is
# built as ask is and run beside it: ask's start is measured against it.
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/floor" ./scripts/floor
# The same loop on ask's stack (urfave/cli, the libraries ask links, its
# signal handlers), built as ask is: how much of ask's start is the stack's.
CGO_ENABLED=0 go build -trimpath -tags "stack${tags:+,$tags}" -ldflags "-s -w" -o "$bin/floor-stack" ./scripts/floor
go build -o "$bin/fakeprovider" ./scripts/fakeprovider
go build -o "$bin/benchrun" ./scripts/benchrun
go test -c -o "$bin/loop.test" ./internal/loop

# What is measured is each binary as it is installed: a copy. The linker
# writes its output through a shared mapping, which leaves most of the
# binary in the page cache as single 4 KB pages, where a copy written with
# write(2) (cp, install, a download) is held in large folios, which a
# start maps many pages at a time. Synced or not, ask as linked started
# 0.7 ms slower than a copy of it (BENCHMARKS.md); the floors alike.
for f in ask floor floor-stack; do
  cp "$bin/$f" "$bin/$f.copy"
  mv "$bin/$f.copy" "$bin/$f"
done

echo "== measuring ($runs runs of each scenario, $rounds rounds of the start)" >&2
"$bin/benchrun" -ask "$bin/ask" -fake "$bin/fakeprovider" -floor "$bin/floor" -stack "$bin/floor-stack" -loopbench "$bin/loop.test" -runs "$runs" -rounds "$rounds"
