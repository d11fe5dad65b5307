#!/bin/sh
# Reads {"name": "...", "times": N} on stdin and greets; shows that the
# arguments arrive as JSON on stdin.
args=$(cat)
name=$(printf '%s' "$args" | sed -n 's/.*"name" *: *"\([^"]*\)".*/\1/p')
times=$(printf '%s' "$args" | sed -n 's/.*"times" *: *\([0-9]*\).*/\1/p')
i=0
while [ "$i" -lt "${times:-1}" ]; do
  echo "hello, $name"
  i=$((i + 1))
done
echo "this goes to stderr and is not the result" >&2
