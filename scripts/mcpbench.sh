#!/usr/bin/env bash
# The time from ask's start to its first request with two slow-starting
# stdio MCP servers configured (scripts/slowmcp, taking 1 s and 2 s to
# answer), against the local fake provider: with no cache (each run starts
# from an empty $XDG_CACHE_HOME), with the servers' tool lists cached, and
# with --no-mcp. Prints a markdown table of medians (ms), as BENCHMARKS.md
# holds it. Needs only Go.
#   scripts/mcpbench.sh            10 runs of each
#   RUNS=20 scripts/mcpbench.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-10}
tmp=$(mktemp -d)
trap 'kill "$fake_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT

echo "== building ask, scripts/fakeprovider and scripts/slowmcp" >&2
CGO_ENABLED=0 go build -trimpath -o "$tmp/ask" ./cmd/ask
go build -o "$tmp/fakeprovider" ./scripts/fakeprovider
go build -o "$tmp/slowmcp" ./scripts/slowmcp

"$tmp/fakeprovider" -log "$tmp/requests.jsonl" > "$tmp/url" &
fake_pid=$!
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done

cat > "$tmp/config.json" <<JSON
{"mcpServers": {
  "docs":   {"command": "$tmp/slowmcp", "args": ["-delay", "1s", "-name", "docs"]},
  "tracker": {"command": "$tmp/slowmcp", "args": ["-delay", "2s", "-name", "tracker"]}
}}
JSON

export ASK_CONFIG=$tmp/config.json ASK_PROVIDER=openai OPENAI_API_KEY=fake-bench-key
export ASK_BASE_URL=$(head -n 1 "$tmp/url") XDG_STATE_HOME=$tmp/state HOME=$tmp

# first_request runs ask once and prints the ms from its start to the
# arrival of its first request at the fake provider.
first_request() {
  : > "$tmp/requests.jsonl"
  local t0
  t0=$(date +%s%N)
  "$tmp/ask" "$@" --no-stream hi > /dev/null 2> "$tmp/stderr" || { cat "$tmp/stderr" >&2; exit 1; }
  local arrived
  arrived=$(head -n 1 "$tmp/requests.jsonl" | sed -E 's/.*"arrived_ns":([0-9]+).*/\1/')
  echo $(( (arrived - t0) / 1000000 ))
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2))}'; }

measure() { # name, setup command, ask flags...
  local name=$1 setup=$2
  shift 2
  local times=()
  for _ in $(seq "$runs"); do
    eval "$setup"
    times+=("$(first_request "$@")")
  done
  printf '| %s | %s | %s–%s |\n' "$name" "$(printf '%s\n' "${times[@]}" | median)" \
    "$(printf '%s\n' "${times[@]}" | sort -n | head -n 1)" "$(printf '%s\n' "${times[@]}" | sort -n | tail -n 1)"
}

echo "| two servers (1 s and 2 s to start) | start → first request, median ms | range |"
echo "|---|---:|---:|"
measure "no cache" 'rm -rf "$tmp/cache"; export XDG_CACHE_HOME=$tmp/cache'
export XDG_CACHE_HOME=$tmp/cache
first_request > /dev/null # fills the cache
measure "lists cached" ':'
measure "--no-mcp" ':' --no-mcp
