# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# How long something took, for the durations the tests print as TAP comments
# (tests/e2e, compat, shared-fs, images, chart); never asserted.

# elapsed_since T0: the seconds since T0 (an $EPOCHREALTIME), one decimal.
elapsed_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# note TEXT...: a measurement into the TAP stream, as a comment (Bats shows
# it; nothing asserts it).
note() { echo "# $*" >&3; }
