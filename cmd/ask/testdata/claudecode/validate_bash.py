"""A PreToolUse hook for Bash, written to Claude Code's hook contract:
it reads the event on stdin and blocks (exit 2, reasons on stderr) a
command that has a faster tool."""
import json
import re
import sys

ADVICE = [
    (re.compile(r"(^|[;&|]\s*)grep\b"), "rg (ripgrep) is faster than grep here"),
    (re.compile(r"\bfind\s+\S+\s+-name\b"), "rg --files -g PATTERN is faster than find -name"),
]

event = json.load(sys.stdin)
if event.get("tool_name") != "Bash":
    sys.exit(0)
command = event.get("tool_input", {}).get("command", "")
reasons = [why for rule, why in ADVICE if rule.search(command)]
for why in reasons:
    print("- " + why, file=sys.stderr)
sys.exit(2 if reasons else 0)
