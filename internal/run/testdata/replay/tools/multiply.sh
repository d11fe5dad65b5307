#!/bin/sh
# The recorded models call multiply with {"a": N, "b": M}; prints N*M.
args=$(cat)
a=$(printf '%s' "$args" | sed -n 's/.*"a" *: *\([0-9-]*\).*/\1/p')
b=$(printf '%s' "$args" | sed -n 's/.*"b" *: *\([0-9-]*\).*/\1/p')
echo "$((a * b))"
