#!/bin/sh
# fakemodel.sh plays a model for the tests: it answers step N, the number
# of "[assistant]" headers on its stdin, with the file $FAKE_REPLIES/N.txt,
# and appends what it read to $FAKE_LOG when that is set.
input=$(cat)
if [ -n "$FAKE_LOG" ]; then
	printf '%s\n=====\n' "$input" >>"$FAKE_LOG"
fi
n=$(printf '%s\n' "$input" | grep -c '^\[assistant\]$')
if [ ! -f "$FAKE_REPLIES/$n.txt" ]; then
	echo "fakemodel: no reply for step $n" >&2
	exit 3
fi
cat "$FAKE_REPLIES/$n.txt"
