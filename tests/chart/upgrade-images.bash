# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # upgrade_old and upgrade_new are read by release-upgrade.bats
# The images of the release that release-upgrade.bats moves the cluster to,
# built in the background from the chart suite's start (setup_suite.bash):
# minutes the first time, mostly compiling, while the other files' tests
# mostly wait on pods. Sourced by setup_suite.bash and release-upgrade.bats.

upgrade_old=24.11
upgrade_new=26.05

upgrade_images_root=${SLURM_JAIL_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
upgrade_images_state=$BATS_RUN_TMPDIR/upgrade-images-$upgrade_new

# start_upgrade_images: images/build-images --slurm $upgrade_new, started
# now in a session of its own; its output goes to build.log and its exit
# status to build.rc in $upgrade_images_state. It keeps none of Bats's
# descriptors, so Bats never waits on it.
start_upgrade_images() {
    install -d -m 0700 "$upgrade_images_state"
    # shellcheck source=hack/lib/mmdebstrap.sh
    . "$upgrade_images_root/hack/lib/mmdebstrap.sh"
    # shellcheck disable=SC2016 # the inner bash expands its own arguments
    without_inherited_fds setsid bash -c \
        'rc=0; "$1/images/build-images" --slurm "$2" >"$3/build.log" 2>&1 || rc=$?; echo "$rc" >"$3/build.rc"' \
        build-upgrade-images "$upgrade_images_root" "$upgrade_new" "$upgrade_images_state" \
        </dev/null >/dev/null 2>&1 &
    echo "$EPOCHREALTIME" >"$upgrade_images_state/started"
}

# await_upgrade_images: waits (at most 30 minutes) for the build that
# start_upgrade_images began, or builds now when none was begun (a file run
# on its own with --setup-suite-file elsewhere). Prints the build's log and
# returns 1 when it failed.
await_upgrade_images() {
    if [ ! -f "$upgrade_images_state/started" ]; then
        "$upgrade_images_root/images/build-images" --slurm "$upgrade_new" >/dev/null
        return
    fi
    local waited=0
    until [ -s "$upgrade_images_state/build.rc" ]; do
        [ "$waited" -lt 3600 ] || { echo "images/build-images --slurm $upgrade_new did not end in 30 minutes" >&2; return 1; }
        sleep 0.5
        waited=$((waited + 1))
    done
    if [ "$(cat "$upgrade_images_state/build.rc")" != 0 ]; then
        tail -40 "$upgrade_images_state/build.log" >&2
        echo "images/build-images --slurm $upgrade_new failed with status $(cat "$upgrade_images_state/build.rc") (log above)" >&2
        return 1
    fi
}
