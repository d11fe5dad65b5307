#!/bin/sh
# Starts a background job and never finishes on its own: the timeout must
# kill the whole process group. Prints the background job's pid first.
sleep 30 &
echo "child $!"
echo started
sleep 30
echo never
