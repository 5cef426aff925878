# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The suite's passes run once, before its tests judge them: Slurm's testsuite
# from Debian's source of the release under test, a cluster of six workers
# on that release, the selected tests as the test user from the login host
# (in the jail), with the jail and, as the mode asks, without it first
# (both; baseline, which then writes what it saw as the baseline).

setup_suite() {
    # shellcheck source=tests/slurm-testsuite/helpers.bash
    . "$(dirname "${BASH_SOURCE[0]}")/helpers.bash"
    local mode src t0 version
    mode=$(suite_mode)
    src=$("$SLURM_JAIL_ROOT/hack/slurm-testsuite-source" "$RELEASE")
    printf '# slurm-testsuite: mode %s, Slurm testsuite of %s (%s tests)\n' \
        "$mode" "$(cat "$src/.debian-version")" "$(selected_tests | wc -l)" >&3
    local passes=(nojail jail)
    [ "$mode" != jail ] || passes=(jail)
    for pass in "${passes[@]}"; do
        t0=$SECONDS
        cluster_up "$pass"
        version=$(cluster_slurm_version)
        [ "$version" = "$(cat "$src/.debian-version")" ] ||
            src=$("$SLURM_JAIL_ROOT/hack/slurm-testsuite-source" "$RELEASE" "$version")
        install_tests "$src"
        echo "$version" >"$BATS_RUN_TMPDIR/slurm-version"
        run_pass "$pass"
        [ "$pass" = nojail ] || rerun_regressions "$pass"
        printf '# slurm-testsuite: the pass %s took %s s (cluster up included)\n' \
            "$pass" $((SECONDS - t0)) >&3
    done
    if [ "$mode" = baseline ]; then
        write_baseline "$(outcomes_file nojail)" "$(cat "$BATS_RUN_TMPDIR/slurm-version")" \
            >"$(baseline_file)"
        printf '# slurm-testsuite: wrote %s\n' "$(baseline_file)" >&3
    fi
}

teardown_suite() {
    # shellcheck source=tests/slurm-testsuite/helpers.bash
    . "$(dirname "${BASH_SOURCE[0]}")/helpers.bash"
    rm -f "$JAIL/etc/sudoers.d/slurm-testsuite"
    # The jail is kept (with the tests' logs in the test user's home) for a
    # fast next start, as the e2e suites' cluster keeps its own.
    "$LC" down >&2
}
