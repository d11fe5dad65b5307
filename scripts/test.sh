#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, vet, every test under the
# race detector, then each fuzz target briefly. Run from anywhere in the repo.
#   FUZZTIME=30s scripts/test.sh    fuzz longer
#   FUZZTIME=0 scripts/test.sh      skip fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-5s}

echo "== go mod download"
go mod download

if [ -f testdata/mcp/package.json ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "== npm ci (MCP test servers)"
    npm ci --prefix testdata/mcp --no-audit --no-fund --loglevel=error
    export ASK_REQUIRE_MCP=1 # installed: the MCP integration tests must run, not skip
  else
    echo "npm not found: the MCP integration tests will be skipped" >&2
  fi
fi

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './testdata/mcp/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 ./...

if [ "$fuzztime" != "0" ]; then
  echo "== fuzz ($fuzztime each)"
  # Every FuzzXxx target, found in the sources, run one at a time.
  grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
    pkg="./$(dirname "${file#./}")"
    for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
      echo "-- $target ($pkg)"
      log=$(mktemp)
      if ! go test -run "^$" -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 2s "$pkg" >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        exit 1
      fi
      tail -n 2 "$log"
      rm -f "$log"
    done
  done
fi
echo "== all tests passed"
