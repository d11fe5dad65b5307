#!/usr/bin/env bash
# actionlint on the GitHub Action and on the README's workflow, failing on
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

# The README's workflows, each YAML block of "Using ask in CI", with the
# action taken from here (uses: ./), so that its inputs and outputs are
# checked against action.yml.
awk -v dir="$tmp/.github/workflows" '
     /^## Using ask in CI$/ {in_section = 1; next}
     /^## / {in_section = 0}
     in_section && /^```yaml$/ {in_block = 1; n++; next}
     in_block && /^```$/ {in_block = 0; next}
     in_block {print > (dir "/readme-" n ".yml")}' README.md
sed -i 's#uses: ask-cli/ask@[^[:space:]]*#uses: ./#' "$tmp"/.github/workflows/readme-*.yml
if ! grep -q 'uses: ./$' "$tmp"/.github/workflows/readme-*.yml; then
  echo 'README.md: "Using ask in CI" has no yaml block using ask-cli/ask' >&2
  exit 1
fi

cd "$tmp"
"$bin/actionlint" -color=false .github/workflows/action-steps.yml .github/workflows/readme-*.yml
echo "actionlint $version: action.yml and the README's workflows are clean"
