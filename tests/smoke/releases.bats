#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# smoke.bats on the other Slurm releases slurm-jail supports: one node of
# that release's own slurmctld and slurmd (from its root, hack/release-rootfs)
# with the chroot.so built against it (build-REL, hack/build-release) and a
# jail of its Debian suite. The roots and builds are release-builds'
# (tests/run-all starts smoke after it). One test per release: it passes
# when every test of smoke.bats passed there; counts and durations go to
# the TAP stream as comments.

setup() {
    # shellcheck source=tests/lib/counted_bats.bash
    . "$SLURM_JAIL_ROOT/tests/lib/counted_bats.bash"
}

# smoke_on REL: smoke.bats on Slurm REL.
smoke_on() {
    local build=${SLURM_JAIL_BUILD_DIR:-$SLURM_JAIL_ROOT/build}-$1
    [ -f "$build/plugin/chroot/chroot.so" ] || {
        echo "no chroot.so built for Slurm $1 in $build: tests/run-all release-builds makes it"
        return 1
    }
    SLURM_JAIL_SMOKE_SLURM=$1 SLURM_JAIL_BUILD_DIR=$build \
        counted_bats "smoke: Slurm $1" smoke "$BATS_TEST_DIRNAME/smoke.bats"
}

@test "Slurm 24.11: smoke" { smoke_on 24.11; }
@test "Slurm 26.05: smoke" { smoke_on 26.05; }
