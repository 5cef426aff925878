#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The local cluster on the other Slurm releases slurm-jail supports: for each
# one, `local-cluster up --slurm REL` (that release's daemons, plugins built
# against its headers, its jail), then a set of e2e files against that
# cluster, then `down` (the smoke suite's one node runs on these releases in
# tests/smoke/releases.bats). One test per release and e2e file: it passes
# when every test of that file passed there; a file whose tests all skipped
# fails.
# Each file's counts and the durations go to the TAP stream as comments.
#
# SLURM_JAIL_COMPAT_E2E="06-fail-closed ...": the e2e files, among those below
# (default: all of them). The whole e2e suite runs on one release with
# SLURM_JAIL_LOCAL_SLURM=REL tests/run-all e2e; 08-local-cluster is left out
# here (about 100 s), its check of slurmctld's log is made by the up test;
# 34-user-controls runs on 26.05 only (the newest release; 22.05 in e2e), and
# so do 33-containers and 35-pyxis: each restarts the cluster with
# --containers (35 with --pyxis too; without --fake-gpu off this machine's
# release, so their GPU tests skip) and brings the plain one back after,
# 78 s and 86 s here; 35 is skipped unless hack/build-pyxis-enroot built
# pyxis for 26.05.
# SLURM_JAIL_LOCAL_JOB_CONTAINER=no: chroot.so alone (see local-cluster --help).
#
# The clusters are the suite's own (state directory, subnet and test users:
# SLURM_JAIL_COMPAT_DIR, _SUBNET, _USERS), so that compat runs beside the
# e2e and shared-fs suites' cluster (tests/run-all) without either taking
# the other's jobs or processes for its own.
export SLURM_JAIL_LOCAL_DIR=${SLURM_JAIL_COMPAT_DIR:-/var/lib/slurm-jail-compat}
export SLURM_JAIL_LOCAL_SUBNET=${SLURM_JAIL_COMPAT_SUBNET:-10.213.63}
export SLURM_JAIL_LOCAL_USERS=${SLURM_JAIL_COMPAT_USERS:-sjc:5021}

setup_file() {
    : "${SLURM_JAIL_ROOT:?run through tests/run-all, or set SLURM_JAIL_ROOT}"
}

setup() {
    # shellcheck source=tests/lib/counted_bats.bash
    . "$SLURM_JAIL_ROOT/tests/lib/counted_bats.bash"
    # shellcheck source=tests/lib/slurmctld_log.bash
    . "$SLURM_JAIL_ROOT/tests/lib/slurmctld_log.bash"
    LC=$SLURM_JAIL_ROOT/hack/local-cluster
    E2E_FILES=${SLURM_JAIL_COMPAT_E2E:-06-fail-closed 10-no-host-root 12-job-isolation 21-slurmd-requests 09-ssh 29-stepd-user-actions 34-user-controls 33-containers 35-pyxis}
}

# compat_up REL: a fresh cluster on Slurm REL; its start time is kept for
# compat_down's total.
compat_up() {
    local rel=$1 t0=$EPOCHREALTIME log=$BATS_FILE_TMPDIR/up-$1.log
    echo "$t0" >"$BATS_FILE_TMPDIR/start-$rel"
    SLURM_JAIL_LOCAL_SLURM=$rel "$LC" down >"$log" 2>&1 3>&- || true
    if ! SLURM_JAIL_LOCAL_SLURM=$rel "$LC" up >>"$log" 2>&1 3>&-; then
        cat "$log"
        return 1
    fi
    printf '# compat: Slurm %s: local-cluster up took %s s\n' "$rel" "$(elapsed_since "$t0")" >&3
    : >"$BATS_FILE_TMPDIR/up-$rel"
    # A healthy start logs no error (each start logs afresh).
    local errors
    errors=$(ctld_start_errors "$SLURM_JAIL_LOCAL_DIR/logs/slurmctld.log" first-start)
    if [ -n "$errors" ]; then
        printf '%s\nslurmctld logged errors on Slurm %s (above)\n' "$errors" "$rel"
        return 1
    fi
}

# compat_e2e REL FILE: tests/e2e/FILE.bats against the cluster on Slurm REL.
compat_e2e() {
    local rel=$1 file=$2
    selected "$file"
    [ -f "$BATS_FILE_TMPDIR/up-$rel" ] || {
        echo "the cluster did not come up on Slurm $rel (see the up test)"
        return 1
    }
    SLURM_JAIL_LOCAL_SLURM=$rel SLURM_JAIL_E2E_KEEP=yes \
        counted_bats "compat: Slurm $rel" "$file" "$SLURM_JAIL_ROOT/tests/e2e/$file.bats"
}

# compat_pyxis REL: e2e 35-pyxis on Slurm REL, when hack/build-pyxis-enroot
# built pyxis for it (else every test of the file skips, which counted_bats
# counts as a failure).
compat_pyxis() {
    local dir=${SLURM_JAIL_PYXIS_DIR:-$SLURM_JAIL_ROOT/.tools/pyxis-enroot}
    selected 35-pyxis
    [ -f "$dir/pyxis-$1/spank_pyxis.so" ] && [ -x "$dir/enroot-root/usr/local/bin/enroot" ] ||
        skip "no pyxis build for Slurm $1 in $dir: hack/build-pyxis-enroot --slurm $1"
    compat_e2e "$1" 35-pyxis
}

selected() {
    case " $E2E_FILES " in
        *" $1 "*) ;;
        *) skip "not in SLURM_JAIL_COMPAT_E2E" ;;
    esac
}

# compat_down REL: the cluster down, nothing of it left running.
compat_down() {
    local rel=$1 t0
    SLURM_JAIL_LOCAL_SLURM=$rel "$LC" down 3>&-
    t0=$(cat "$BATS_FILE_TMPDIR/start-$rel" 2>/dev/null) || return 0
    printf '# compat: Slurm %s: %s s in all\n' "$rel" "$(elapsed_since "$t0")" >&3
}

@test "Slurm 24.11: local-cluster up" { compat_up 24.11; }
@test "Slurm 24.11: e2e 06-fail-closed" { compat_e2e 24.11 06-fail-closed; }
@test "Slurm 24.11: e2e 10-no-host-root" { compat_e2e 24.11 10-no-host-root; }
@test "Slurm 24.11: e2e 12-job-isolation" { compat_e2e 24.11 12-job-isolation; }
@test "Slurm 24.11: e2e 21-slurmd-requests" { compat_e2e 24.11 21-slurmd-requests; }
@test "Slurm 24.11: e2e 09-ssh" { compat_e2e 24.11 09-ssh; }
@test "Slurm 24.11: e2e 29-stepd-user-actions" { compat_e2e 24.11 29-stepd-user-actions; }
@test "Slurm 24.11: local-cluster down" { compat_down 24.11; }

@test "Slurm 26.05: local-cluster up" { compat_up 26.05; }
@test "Slurm 26.05: e2e 06-fail-closed" { compat_e2e 26.05 06-fail-closed; }
@test "Slurm 26.05: e2e 10-no-host-root" { compat_e2e 26.05 10-no-host-root; }
@test "Slurm 26.05: e2e 12-job-isolation" { compat_e2e 26.05 12-job-isolation; }
@test "Slurm 26.05: e2e 21-slurmd-requests" { compat_e2e 26.05 21-slurmd-requests; }
@test "Slurm 26.05: e2e 09-ssh" { compat_e2e 26.05 09-ssh; }
@test "Slurm 26.05: e2e 29-stepd-user-actions" { compat_e2e 26.05 29-stepd-user-actions; }
@test "Slurm 26.05: e2e 34-user-controls" { compat_e2e 26.05 34-user-controls; }
@test "Slurm 26.05: e2e 33-containers" { compat_e2e 26.05 33-containers; }
@test "Slurm 26.05: e2e 35-pyxis" { compat_pyxis 26.05; }
@test "Slurm 26.05: local-cluster down" { compat_down 26.05; }
