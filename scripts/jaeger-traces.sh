#!/usr/bin/env bash
# The traces test against a real Jaeger (issue 33): builds Jaeger from the
# Go module proxy once (cached under ~/.cache/ask-jaeger), starts it with
# its in-memory store (OTLP/HTTP on :4318, the query API on :16686), and
# runs TestJaegerReadsTheRunsTrace, which makes a traced run of two steps
# and one MCP call and reads the trace back through /api/traces/ID.
#   scripts/jaeger-traces.sh
# Building Jaeger v1.76.0 took 20 minutes on the 2-core bench machine
# (6.5 minutes of CPU, the rest waiting on a shared machine); CI's own
# test of the spans (TestExecuteExportsTheRunsTrace) uses an in-process
# OTLP receiver instead, and scripts/test.sh runs this script only when a
# Jaeger is already cached, or with ASK_JAEGER=1.
set -euo pipefail
cd "$(dirname "$0")/.."

work="" jaeger="" log=""
cleanup() {
  if [ -n "$jaeger" ]; then
    # Its graceful stop takes seconds and its store is memory: no waiting.
    kill -9 "$jaeger" 2>/dev/null || true
    wait "$jaeger" 2>/dev/null || true
  fi
  rm -rf "$work" "$log"
}
trap cleanup EXIT

version=v1.76.0
cache="$HOME/.cache/ask-jaeger"
bin="$cache/jaeger-$version"

if [ ! -x "$bin" ]; then
  echo "== building Jaeger $version (once; cached in $cache)"
  mkdir -p "$cache"
  # Jaeger's go.mod has replace directives, so `go install pkg@version`
  # refuses it: build inside a copy of its module.
  src=$(go mod download -json "github.com/jaegertracing/jaeger@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  work=$(mktemp -d)
  cp -r "$src" "$work/jaeger" && chmod -R u+w "$work/jaeger"
  (cd "$work/jaeger" && CGO_ENABLED=0 go build -o "$bin.tmp" ./cmd/jaeger)
  mv "$bin.tmp" "$bin"
fi

log=$(mktemp)
"$bin" >"$log" 2>&1 &
jaeger=$!
for _ in $(seq 100); do
  if curl -fsS -o /dev/null http://127.0.0.1:16686/api/services 2>/dev/null; then
    break
  fi
  if ! kill -0 "$jaeger" 2>/dev/null; then
    echo "Jaeger did not start:" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 0.3
done

echo "== traces against Jaeger $version"
ASK_TEST_JAEGER=http://127.0.0.1:16686 ASK_TEST_JAEGER_OTLP=http://127.0.0.1:4318 \
  go test -count=1 -run '^TestJaegerReadsTheRunsTrace$' -v ./internal/run/ | grep -v '^=== '
