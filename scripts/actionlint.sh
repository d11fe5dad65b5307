#!/usr/bin/env bash
# actionlint on the GitHub Action and on every workflow in the README, failing on
# any finding. actionlint is built from the Go module proxy into a cache
# directory (it is a CI tool, not a dependency of ask: go.mod does not
# name it). scripts/test.sh runs this; it also runs alone.
set -euo pipefail
cd "$(dirname "$0")/.."

version=v1.7.12
bin="${XDG_CACHE_HOME:-$HOME/.cache}/ask-ci/actionlint-$version"
if [ ! -x "$bin/actionlint" ]; then
  echo "-- building actionlint $version"
  GOBIN="$bin" GOFLAGS='' go install "github.com/rhysd/actionlint/cmd/actionlint@$version"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/.github/workflows"
git -C "$tmp" init -q # actionlint finds local actions (uses: ./) from the repository's top
cp action.yml "$tmp/action.yml"

# actionlint reads workflows only: the action's steps become one, with
# its inputs as the workflow's.
go run ./scripts/actionwf action.yml > "$tmp/.github/workflows/action-steps.yml"

# Every YAML block of the README that is a workflow (it has a top-level
# jobs: key), whole as it is printed, with the action taken from here
# (uses: ./) so that its inputs and outputs are checked against
# action.yml. A block that is a fragment of a workflow fails here ("on"
# section is missing): a reader copies blocks whole.
awk -v dir="$tmp" '/^```ya?ml$/ {n++; in_block = 1; file = sprintf("%s/block-%02d.yml", dir, n); next}
     in_block && /^```$/ {in_block = 0; next}
     in_block {print > file}' README.md
workflows=()
for block in "$tmp"/block-*.yml; do
  [ -e "$block" ] || continue
  grep -q '^jobs:' "$block" || continue # a Kubernetes Job, a config file: no workflow
  name="readme-$(basename "$block")"
  sed 's#uses: ask-cli/ask@[^[:space:]]*#uses: ./#' "$block" > "$tmp/.github/workflows/$name"
  workflows+=(".github/workflows/$name")
done
if ! grep -qs 'uses: ./$' "$tmp"/.github/workflows/readme-*.yml; then
  echo 'README.md: no workflow block uses ask-cli/ask' >&2
  exit 1
fi

cd "$tmp"
"$bin/actionlint" -color=false .github/workflows/action-steps.yml "${workflows[@]}"
echo "actionlint $version: action.yml and the README's ${#workflows[@]} workflows are clean"
