# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Running other Bats files from a Bats test (tests/compat, tests/shared-fs):
# their counts and durations go to the TAP stream as comments.

# shellcheck source=tests/lib/elapsed.bash
. "${BASH_SOURCE[0]%/*}/elapsed.bash"

# counted_bats LABEL NAME FILE: bats FILE; "# LABEL: NAME: N passed, N failed,
# N skipped in S s" goes to the TAP stream. It fails, showing FILE's output,
# unless every test of FILE passed (a file whose tests all skipped fails).
counted_bats() {
    local label=$1 name=$2 out t0=$EPOCHREALTIME rc=0 ok nok nskip
    out=$BATS_FILE_TMPDIR/$(printf '%s-%s' "$label" "$name" | tr -c 'A-Za-z0-9._-' '_').tap
    # Without per-test watchdogs of its own: the calling test already has
    # one (tests/run-all's BATS_TEST_TIMEOUT), and the watchdog of a test
    # whose shell was killed lives on holding FILE's output open, which held
    # the whole file until the watchdog's own timeout (30 minutes).
    env -u BATS_TEST_TIMEOUT bats --tap "$3" >"$out" 2>&1 3>&- || rc=$?
    nskip=$(grep -cE '^ok [0-9]+ .* # skip' "$out" || true)
    ok=$(($(grep -cE '^ok ' "$out" || true) - nskip))
    nok=$(grep -cE '^not ok ' "$out" || true)
    printf '# %s: %s: %d passed, %d failed, %d skipped in %s s\n' \
        "$label" "$name" "$ok" "$nok" "$nskip" "$(elapsed_since "$t0")" >&3
    if [ "$rc" -ne 0 ] || [ "$nok" -gt 0 ] || [ "$ok" -eq 0 ]; then
        cat "$out"
        return 1
    fi
}
