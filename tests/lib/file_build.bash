# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# A build that a Bats file's setup_file runs once for all its tests
# (tests/arm64, tests/arm64-images, tests/release-builds): setup_file records
# it, and each test that needs it first asserts that it succeeded, so that a
# failed build fails those tests with its log instead of odder errors later.
# Then what its ctest run must show (assert_ctest_passed).

# record_build NAME WHAT CMD...: CMD, with its output in
# $BATS_FILE_TMPDIR/NAME.log and its exit status in NAME.rc; WHAT names the
# build in assert_built's failure. It never fails itself.
record_build() {
    local name=$1 what=$2 rc=0
    shift 2
    echo "$what" >"$BATS_FILE_TMPDIR/$name.what"
    "$@" >"$BATS_FILE_TMPDIR/$name.log" 2>&1 || rc=$?
    echo "$rc" >"$BATS_FILE_TMPDIR/$name.rc"
}

# assert_built NAME: the build record_build NAME ran succeeded; otherwise the
# last 40 lines of its log, and a failure "WHAT failed (log above)" (bats-support
# must be loaded). A build that was never recorded fails too.
assert_built() {
    local base=$BATS_FILE_TMPDIR/$1
    [ "$(cat "$base.rc" 2>/dev/null)" != 0 ] || return 0
    tail -n 40 "$base.log" 2>/dev/null || echo "no build $1 was recorded ($base.log is missing)"
    fail "$(cat "$base.what" 2>/dev/null || echo "the build $1") failed (log above)"
}

# assert_ctest_passed MIN: the ctest run in $output (Bats' `run`) passed
# every test, ran none that was left unbuilt (NOT_BUILT: a suite that no
# target built) and at least MIN tests.
assert_ctest_passed() {
    assert_success
    assert_output --partial '100% tests passed'
    refute_output --partial 'NOT_BUILT'
    local n
    # shellcheck disable=SC2154 # $output: Bats' run sets it
    n=$(sed -nE 's/.*tests passed, 0 tests failed out of ([0-9]+)/\1/p' <<<"$output")
    [ "${n:-0}" -ge "$1" ] || fail "only ${n:-0} tests ran (at least $1 expected)"
}
