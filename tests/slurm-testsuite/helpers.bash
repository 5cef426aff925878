# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Slurm's own regression tests against the local cluster, with the jail and
# without it: the cluster, the passes and their outcomes. Sourced by
# setup_suite.bash and slurm-testsuite.bats.
# shellcheck disable=SC2034 # settings used by the files that source this one

: "${SLURM_JAIL_ROOT:?run through tests/run-all, or set SLURM_JAIL_ROOT}"
SUITE_DIR=$SLURM_JAIL_ROOT/tests/slurm-testsuite
LC=$SLURM_JAIL_ROOT/hack/local-cluster
# A cluster of its own (state directory, subnet, test users), so that the
# suite can run beside the e2e suites' cluster without either taking the
# other's jobs or processes for its own.
export SLURM_JAIL_LOCAL_DIR=${SLURM_JAIL_TESTSUITE_STATE:-/var/lib/slurm-jail-testsuite}
export SLURM_JAIL_LOCAL_SUBNET=${SLURM_JAIL_TESTSUITE_SUBNET:-10.213.61}
export SLURM_JAIL_LOCAL_USERS=${SLURM_JAIL_TESTSUITE_USERS:-sjt:5031}
STATE=$SLURM_JAIL_LOCAL_DIR
JAIL=$STATE/jail
# Six nodes: the tests that want three to five nodes run.
WORKERS=6
# shellcheck source=hack/lib/local-cluster/users.sh
. "$SLURM_JAIL_ROOT/hack/lib/local-cluster/users.sh"
TEST_USER=$LC_USER
TEST_UID=$LC_UID
HOME_IN_JAIL=/home/$TEST_USER
# Where the tests live for the test user: in the home every node sees, as
# pytest's temporary directories must (a job's /tmp is its own).
TESTS_IN_JAIL=$HOME_IN_JAIL/slurm-testsuite
# What the tests need in the jail: pytest and the modules atf imports,
# expect for testsuite/expect, a C compiler (the expect tests of open files
# and signal masks build their programs), and sudo (atf asks `sudo -ln`
# whether the test user may act as SlurmUser; without it more tests skip).
JAIL_PACKAGES=(python3-pytest python3-pytest-timeout python3-pexpect python3-py python3-requests
    expect gcc libc6-dev sudo)
# Seconds an expect test may take before it counts as failed.
EXPECT_TIMEOUT=300
# Where a pass leaves its outcomes: one line per test, "ID<TAB>OUTCOME<TAB>DETAIL"
# (OUTCOME: passed, failed or skipped; DETAIL: the reason of a skip or the
# first line of a failure), IDs "python/FILE::TEST" and "expect/TEST".
outcomes_file() { echo "$BATS_RUN_TMPDIR/outcomes-$1"; }

# The release the cluster runs: SLURM_JAIL_LOCAL_SLURM, else this machine's.
# shellcheck source=hack/lib/slurm-releases.sh
. "$SLURM_JAIL_ROOT/hack/lib/slurm-releases.sh"
RELEASE=${SLURM_JAIL_LOCAL_SLURM:-$(default_release)}
baseline_file() { echo "$SUITE_DIR/baseline-$RELEASE.txt"; }

# The suite's mode: jail (the jail pass, judged against the recorded
# baseline; the default where one exists), both (a pass without the jail
# and one with it, judged against each other; the default where none
# exists), baseline (both, and the pass without the jail written as the
# baseline).
suite_mode() {
    local mode=${SLURM_JAIL_TESTSUITE_PASS:-}
    if [ -z "$mode" ]; then
        if [ -f "$(baseline_file)" ]; then mode=jail; else mode=both; fi
    fi
    case $mode in
        jail | both | baseline) echo "$mode" ;;
        *)
            echo "SLURM_JAIL_TESTSUITE_PASS=$mode: use jail, both or baseline" >&2
            return 1
            ;;
    esac
}

# release_name NAME [REL:NAME...]: a test's name in the cluster's release:
# the NAME of the newest REL at or below it, else the first (22.05's).
# 24.11 renumbered testsuite/python (test_116_22.py is srun --chdir).
release_name() {
    local name=$1 alt rel
    shift
    for alt in "$@"; do
        rel=${alt%%:*}
        [ "$(printf '%s\n' "$rel" "$RELEASE" | sort -V | head -n 1)" = "$rel" ] && name=${alt#*:}
    done
    echo "$name"
}

# The Slurm tests the suite runs, as the cluster's release names them: the
# judge lines of slurm-testsuite.bats (its one list), e.g.
# "python commands/srun/test_--chdir.py::test_chdir", "expect test14.4".
selected_tests() {
    local kind names
    sed -nE 's/.*[{ ]judge (python|expect) ([^;}]*[^;} ]).*/\1 \2/p' "$SUITE_DIR/slurm-testsuite.bats" |
        while read -r kind names; do
            # shellcheck disable=SC2086 # the names are words
            echo "$kind $(release_name $names)"
        done
}

# The Debian version of the Slurm the cluster runs.
cluster_slurm_version() {
    local rootfs
    rootfs=$(cat "$STATE/release-rootfs" 2>/dev/null || true)
    dpkg-query --admindir="$rootfs/var/lib/dpkg" -W -f='${Version}' slurmd
}

# cluster_up jail|nojail: the cluster for a pass. Without the jail: no
# chroot.so line and no job container, PrologFlags=Contain kept; the nodes'
# own root has the jail's /home bound, as with the jail. Both with Slurm's
# default scheduler, sched/backfill, which heterogeneous jobs need, and
# memory on the nodes for the tests that ask for some.
cluster_up() {
    "$LC" down >&2
    if [ "$1" = jail ]; then
        SLURM_JAIL_LOCAL_SCHEDULER=sched/backfill SLURM_JAIL_LOCAL_NODE_MEMORY=4096 \
            "$LC" up --workers "$WORKERS" >&2
    else
        SLURM_JAIL_LOCAL_SCHEDULER=sched/backfill SLURM_JAIL_LOCAL_NODE_MEMORY=4096 \
            SLURM_JAIL_LOCAL_JOB_CONTAINER=no SLURM_JAIL_LOCAL_CONTAIN=yes "$LC" up --workers "$WORKERS" >&2
        echo "# No SPANK plugin: Slurm's own tests without the jail." >"$STATE/etc/plugstack.conf"
    fi
    "$LC" jail-install "${JAIL_PACKAGES[@]}" >&2
    install -m 0440 /dev/stdin "$JAIL/etc/sudoers.d/slurm-testsuite" <<<"$TEST_USER ALL=(ALL) NOPASSWD: ALL"
}

# install_tests SRC: Slurm's testsuite/ (python/, expect/) into the test
# user's home in the jail, with the testsuite.conf that points atf and
# expect at the installed Slurm.
install_tests() {
    local src=$1 dst=$JAIL$TESTS_IN_JAIL
    rm -rf "$dst"
    install -d -m 0755 -o "$TEST_UID" -g "$TEST_UID" "$dst"
    cp -a "$src/testsuite/python" "$src/testsuite/expect" "$dst/"
    printf '%s\n' SlurmInstallDir=/usr SlurmConfigDir=/etc/slurm >"$dst/testsuite.conf"
    cp "$SUITE_DIR/outcomes.py" "$dst/"
    end_id_capture_at_line_end "$dst/expect/test15.4"
    chown -R "$TEST_UID:$TEST_UID" "$dst"
}

# end_id_capture_at_line_end FILE: Slurm's test15.4 captures the job's `id`
# line with (uid=.*\n), and Tcl's `.` matches newlines too: when salloc's
# next line ("salloc: Relinquishing job allocation N") arrives in the same
# read, as it does on a loaded machine, it is captured with the id line and
# the test fails, with the jail or without it. The capture is made to end at
# the id line's own end; what the test compares is unchanged. A testsuite
# whose test15.4 has no such capture is left as it is.
end_id_capture_at_line_end() {
    local file=$1 text greedy='-re "(uid=.*\n)"' line='-re "(uid=\[^\r\n\]*\r?\n)"'
    [ -f "$file" ] || return 0
    text=$(<"$file")
    [[ $text == *"$greedy"* ]] || return 0
    printf '%s\n' "${text//"$greedy"/"$line"}" >"$file"
}

# as_test_user SCRIPT: SCRIPT run by bash as the test user on the login host.
as_test_user() { "$LC" run -- bash -c "$1"; }

# run_pass NAME: the selected tests as the test user from the login host,
# their outcomes in outcomes_file NAME.
run_pass() {
    local name=$1 out kind test python=() expect=()
    out=$(outcomes_file "$name")
    # Only the tests this release's testsuite has (pytest stops at a missing
    # file; 24.11 renumbered its python tests): the others have no outcome.
    while read -r kind test; do
        if [ "$kind" = python ]; then
            [ ! -f "$JAIL$TESTS_IN_JAIL/python/tests/${test%%::*}" ] || python+=("tests/$test")
        else
            [ ! -f "$JAIL$TESTS_IN_JAIL/expect/$test" ] || expect+=("$test")
        fi
    done < <(selected_tests)
    : >"$out"
    [ ${#python[@]} -eq 0 ] || as_test_user "cd $TESTS_IN_JAIL/python && rm -rf ~/.slurm-testsuite-tmp &&
        python3 -m pytest -p no:cacheprovider --basetemp=\$HOME/.slurm-testsuite-tmp -q \
            --junitxml=$TESTS_IN_JAIL/junit.xml ${python[*]} >$TESTS_IN_JAIL/pytest.log 2>&1;
        python3 $TESTS_IN_JAIL/outcomes.py $TESTS_IN_JAIL/junit.xml" >>"$out"
    for test in "${expect[@]}"; do
        as_test_user "$(expect_runner "$test")" >>"$out"
    done
}

# rerun_regressions NAME: the tests that passed without the jail and failed
# in pass NAME run once more; a second outcome replaces the first, which its
# detail keeps (Slurm's tests race the scheduler under load: a signal sent
# before the step runs). The first run of each is printed to the TAP stream.
rerun_regressions() {
    local name=$1 out id state kind test again
    out=$(outcomes_file "$name")
    while IFS=$'\t' read -r id state _; do
        [ "$state" = passed ] || continue
        [ "$(outcome_of "$id" "$out" | cut -f1)" = failed ] || continue
        kind=${id%%/*}
        test=${id#*/}
        printf '# slurm-testsuite: %s failed with the jail, running it again: %s\n' \
            "$id" "$(outcome_of "$id" "$out" | cut -f2)" >&3
        if [ "$kind" = python ]; then
            again=$(as_test_user "cd $TESTS_IN_JAIL/python && python3 -m pytest -p no:cacheprovider \
                --basetemp=\$HOME/.slurm-testsuite-tmp -q --junitxml=$TESTS_IN_JAIL/again.xml 'tests/$test' \
                >>$TESTS_IN_JAIL/pytest.log 2>&1; python3 $TESTS_IN_JAIL/outcomes.py $TESTS_IN_JAIL/again.xml")
        else
            again=$(as_test_user "$(expect_runner "$test")")
        fi
        again=$(grep -F "$id"$'\t' <<<"$again" | head -1)
        [ -n "$again" ] || continue
        printf '%s (the first run failed: %s)\n' "$again" "$(outcome_of "$id" "$out" | cut -f2)" >>"$out.again"
    done < <(reference_outcomes 2>/dev/null)
    if [ -f "$out.again" ]; then
        grep -vF -f <(cut -f1 "$out.again" | sed 's/$/\t/') "$out" >"$out.kept" || true
        cat "$out.kept" "$out.again" >"$out"
        rm -f "$out.kept" "$out.again"
    fi
}

# expect_runner TEST: a script that runs testsuite/expect's TEST and prints
# its outcome line (exit 0: passed; 255: skipped, Slurm's skip; else failed).
expect_runner() {
    cat <<EOF
cd $TESTS_IN_JAIL/expect && timeout $EXPECT_TIMEOUT expect ./$1 >$TESTS_IN_JAIL/$1.log 2>&1
rc=\$?
case \$rc in
    0) printf 'expect/%s\tpassed\t\n' $1 ;;
    255) printf 'expect/%s\tskipped\t%s\n' $1 "\$(grep -m1 -i 'skip' $TESTS_IN_JAIL/$1.log | tr '\t' ' ')" ;;
    *) printf 'expect/%s\tfailed\texit status %s: %s\n' $1 \$rc "\$(grep -m1 -iE 'fail|error' $TESTS_IN_JAIL/$1.log | tr '\t' ' ')" ;;
esac
EOF
}

# write_baseline OUTCOMES VERSION: the baseline file: how it was recorded, the
# outcomes without the jail, and a digest of them that judge checks (a
# baseline is recorded, never edited by hand).
write_baseline() {
    local outcomes=$1 version=$2
    cat <<EOF2
# Slurm's own tests WITHOUT the jail on the local cluster: Slurm $version,
# $WORKERS workers, no SPANK plugin, no job container, PrologFlags=Contain,
# run as $TEST_USER from the login host. Recorded $(date -u +%Y-%m-%d) by:
#   SLURM_JAIL_TESTSUITE_PASS=baseline tests/run-all slurm-testsuite
# Never edit it by hand: record it again (the digest below is checked).
# slurm-version: $version
# digest: $(sort "$outcomes" | sha256sum | cut -d' ' -f1)
EOF2
    sort "$outcomes"
}

# baseline_outcomes: the recorded baseline's outcome lines, checked: its
# digest matches its lines and it was recorded on the cluster's Slurm.
baseline_outcomes() {
    local file want version
    file=$(baseline_file)
    want=$(sed -n 's/^# digest: //p' "$file")
    version=$(sed -n 's/^# slurm-version: //p' "$file")
    if [ "$(grep -v '^#' "$file" | sort | sha256sum | cut -d' ' -f1)" != "$want" ]; then
        echo "$file was changed by hand (its digest does not match); record it again:" \
            "SLURM_JAIL_TESTSUITE_PASS=baseline tests/run-all slurm-testsuite" >&2
        return 1
    fi
    if [ "$version" != "$(cat "$BATS_RUN_TMPDIR/slurm-version")" ]; then
        echo "$file was recorded on Slurm $version, the cluster runs $(cat "$BATS_RUN_TMPDIR/slurm-version"); record it again:" \
            "SLURM_JAIL_TESTSUITE_PASS=baseline tests/run-all slurm-testsuite" >&2
        return 1
    fi
    grep -v '^#' "$file"
}

# The outcomes the jail pass is judged against: the pass without the jail of
# this run (mode both), else the recorded baseline.
reference_outcomes() {
    if [ -f "$(outcomes_file nojail)" ]; then cat "$(outcomes_file nojail)"; else baseline_outcomes; fi
}

# outcome_of ID FILE: the outcome (and detail) of test ID in FILE's lines.
outcome_of() { awk -F '\t' -v id="$1" '$1 == id { print $2 "\t" $3; exit }' "$2"; }

# show_expect_log ID: the end of an expect test's log (its last run), for a
# failure that its one-line detail cannot explain ("Login and slurm user info
# mismatch" names neither line it compared).
show_expect_log() {
    local log=$JAIL$TESTS_IN_JAIL/${1#expect/}.log
    [ "${1%%/*}" = expect ] && [ -f "$log" ] || return 0
    echo "# the end of ${log#"$JAIL"}:"
    tail -n 40 "$log" | sed 's/^/#   /'
}

# judge python|expect TEST [REL:TEST...]: the outcome of one Slurm test with
# the jail, against its outcome without it (TEST: FILE::FUNCTION below
# testsuite/python/tests, or an expect test's name; REL:TEST its name from
# release REL on). Fails when it passed
# without the jail and does not with it, or has no outcome without it;
# skips, with the reason, when it does not pass without the jail either
# (cluster limits: never counted as a pass).
judge() {
    local id with reference jail ref
    id=$1/$(release_name "${@:2}")
    [ -f "$BATS_RUN_TMPDIR/slurm-version" ] || fail "the suite's passes did not run (see setup_suite's output)"
    with=$(outcomes_file jail)
    reference=$BATS_TEST_TMPDIR/reference
    reference_outcomes >"$reference" || fail "no outcomes without the jail to judge against (above)"
    jail=$(outcome_of "$id" "$with")
    ref=$(outcome_of "$id" "$reference")
    printf '# %s: without the jail %s, with it %s\n' "$id" "${ref%%$'\t'*}" "${jail%%$'\t'*}" >&3
    if [ -z "$ref" ] && [ -z "$jail" ]; then
        skip "not in Slurm $(cat "$BATS_RUN_TMPDIR/slurm-version")'s testsuite (no outcome either way)"
    fi
    [ -n "$ref" ] || fail "$id has no outcome without the jail: record the baseline again"
    case ${ref%%$'\t'*} in
        passed) [ "${jail%%$'\t'*}" = passed ] || {
            show_expect_log "$id"
            fail "$id passes without the jail, ${jail%%$'\t'*} with it: ${jail#*$'\t'}"
        } ;;
        *) skip "not judged: ${ref%%$'\t'*} without the jail (${ref#*$'\t'}); with it: ${jail%%$'\t'*}" ;;
    esac
}
