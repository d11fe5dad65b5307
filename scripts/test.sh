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
  elif [ -n "${CI:-}" ]; then
    # In CI the MCP integration tests are part of the bar, not optional.
    echo "npm not found: CI needs Node.js and npm for the MCP integration tests (apt-get install nodejs npm)" >&2
    exit 1
  else
    echo "npm not found: the MCP integration tests will be skipped" >&2
  fi
fi

# The ACP tests play an editor with the official client, @agentclientprotocol/sdk
# (testdata/acp); in CI they are part of the bar (the Go test fails under CI=true
# without it).
if [ -f testdata/acp/package.json ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "== npm ci (the ACP client)"
    npm ci --prefix testdata/acp --no-audit --no-fund --loglevel=error
  elif [ -n "${CI:-}" ]; then
    echo "npm not found: CI needs Node.js and npm for the ACP tests (apt-get install nodejs npm)" >&2
    exit 1
  else
    echo "npm not found: the ACP tests will be skipped" >&2
  fi
fi

# The official MCP conformance suite (it brings the Node.js 22 it needs as
# an npm package): run against ask's MCP client and against ask mcp serve.
if [ -f testdata/mcp-conformance/package.json ] && command -v npm >/dev/null 2>&1; then
  echo "== npm ci (MCP conformance suite)"
  npm ci --prefix testdata/mcp-conformance --no-audit --no-fund --loglevel=error
fi

# The hook tests run Claude Code's own example scripts, which use jq and
# python3; in CI they are part of the bar, so a fresh machine gets them.
for tool in jq python3; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    if [ -n "${CI:-}" ] && command -v apt-get >/dev/null 2>&1; then
      echo "== apt-get install $tool (the hook tests' scripts use it)"
      apt-get update -qq >/dev/null && apt-get install -y -qq "$tool" >/dev/null
    else
      echo "$tool not found: the hook tests that run Claude Code's example scripts will be skipped" >&2
    fi
  fi
done

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './testdata/mcp/*' -not -path './testdata/acp/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi

echo "== go vet"
go vet ./...
# The floor on ask's stack (scripts/bench.sh builds it) is behind a tag.
go vet -tags stack ./scripts/floor

# The README's first command, exactly as a new user runs it: build ask and
# replay the built-in demo, which finds the bug in the demo's cart.go.
echo "== the README's first command"
readme_first=$(sed -n '/^```sh$/{n;p;q}' README.md)
demo_out=$(eval "$readme_first")
if ! grep -q 'cart.go' <<<"$demo_out"; then
  echo "the README's first command did not replay the demo: $readme_first" >&2
  echo "$demo_out" >&2
  exit 1
fi

# The GitHub Action and the README's workflow for it, through actionlint.
echo "== actionlint"
scripts/actionlint.sh

# The README's Slurm array on a real Slurm: one node started here, a shard
# stopped and resubmitted (as root under CI=true it installs slurm-wlm and
# munge; elsewhere it says why it skips).
echo "== slurm"
scripts/slurm-test.sh

echo "== go test -race"
go test -race -count=1 ./...

# The traces against a real Jaeger, when one is cached: building it takes
# about 20 minutes on 2 cores, too long for every run (scripts/jaeger-traces.sh).
if [ -x "$HOME/.cache/ask-jaeger/jaeger-v1.76.0" ] || [ -n "${ASK_JAEGER:-}" ]; then
  scripts/jaeger-traces.sh
fi

# fuzz_once runs one target and prints its log; it fails on a finding.
# Go 1.26's fuzz coordinator can also fail a clean run at the -fuzztime
# boundary with a bare "context deadline exceeded" when a loaded machine
# delays a worker (golang/go#75804, fixed in Go 1.27). A real finding always
# writes its input under testdata/fuzz, so a failure without one is that
# race and is run again, up to twice.
fuzz_once() {
  local pkg=$1 target=$2 log
  log=$(mktemp)
  if go test -run "^$" -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 2s "$pkg" >"$log" 2>&1; then
    tail -n 2 "$log"
    rm -f "$log"
    return 0
  fi
  cat "$log" >&2
  if grep -q 'context deadline exceeded' "$log" && ! grep -q -e 'Failing input written' -e 'panic:' "$log"; then
    rm -f "$log"
    return 75 # the coordinator race: worth another try
  fi
  rm -f "$log"
  return 1
}

if [ "$fuzztime" != "0" ]; then
  echo "== fuzz ($fuzztime each)"
  # Every FuzzXxx target, found in the sources, run one at a time.
  grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
    pkg="./$(dirname "${file#./}")"
    for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
      echo "-- $target ($pkg)"
      rc=0
      fuzz_once "$pkg" "$target" || rc=$?
      for retry in 1 2; do
        [ "$rc" = 75 ] || break
        echo "-- $target: deadline race at the end of -fuzztime, no failing input; running it again ($retry of 2)" >&2
        rc=0
        fuzz_once "$pkg" "$target" || rc=$?
      done
      if [ "$rc" != 0 ]; then
        echo "fuzz target $target ($pkg) failed" >&2
        exit 1
      fi
    done
  done
fi
echo "== all tests passed"
