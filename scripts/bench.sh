#!/usr/bin/env bash
# End-to-end benchmarks of ask against a local fake provider: builds ask as
# a release would be built, builds the fake provider and the measuring
# program, and prints a markdown table of medians (the table BENCHMARKS.md
# holds). Run from anywhere in the repo; needs only Go.
#   scripts/bench.sh                 10 runs of each scenario
#   RUNS=30 scripts/bench.sh         more runs
#   GOFLAGS=-tags=urfave_cli_no_docs scripts/bench.sh   measure a build variant
# The measuring is done by scripts/benchrun (Go): wall time from fork-exec
# to wait, CPU time and peak RSS from the kernel's rusage of ask (what
# /usr/bin/time reports as %U+%S and %M), request times and sizes from the
# fake provider's log. hyperfine is not needed.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-10}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

echo "== building (go build -trimpath -ldflags '-s -w')" >&2
go build -trimpath -ldflags "-s -w" -o "$bin/ask" ./cmd/ask
go build -o "$bin/fakeprovider" ./scripts/fakeprovider
go build -o "$bin/benchrun" ./scripts/benchrun

echo "== measuring ($runs runs of each scenario)" >&2
"$bin/benchrun" -ask "$bin/ask" -fake "$bin/fakeprovider" -runs "$runs"

# A cross-check of the RSS column with GNU time, when it is installed.
if [ -x /usr/bin/time ]; then
  rss=$(/usr/bin/time -f %M "$bin/ask" --version 2>&1 >/dev/null | tail -n 1)
  echo
  echo "Cross-check: /usr/bin/time -f %M ask --version reports ${rss} KB peak RSS."
else
  echo "note: /usr/bin/time is missing (Debian package \"time\"); the RSS column does not need it" >&2
fi
