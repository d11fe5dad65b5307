#!/bin/sh
# Prints a little, complains on stderr and exits 3.
echo "partial output"
echo "disk quota exceeded" >&2
exit 3
