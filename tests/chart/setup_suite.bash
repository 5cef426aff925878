# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The chart suite starts building the upgrade's new-release images in the
# background (upgrade-images.bash) and, at its end, waits for that build, so
# that no build outlives the suite, whichever of its files ran.

setup_suite() {
    # shellcheck source=tests/chart/upgrade-images.bash
    . "$(dirname "${BASH_SOURCE[0]}")/upgrade-images.bash"
    start_upgrade_images
}

teardown_suite() {
    # shellcheck source=tests/chart/upgrade-images.bash
    . "$(dirname "${BASH_SOURCE[0]}")/upgrade-images.bash"
    await_upgrade_images >/dev/null
}
