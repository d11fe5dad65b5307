#!/bin/sh
# The recorded models call weather with {"location": "..."}; the recorded
# answers say 40 C, so that is what it reports, with the place it was given.
location=$(sed -n 's/.*"location" *: *"\([^"]*\)".*/\1/p')
echo "40 C in $location"
