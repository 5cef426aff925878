# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# A fake scontrol for the health programs that ask Slurm for the new-node
# gate's reservations (slurm-jail-nccl-submit): `show reservation` prints
# what it is given. Sourced by the health and helm suites.

# fake_scontrol [TEXT]: writes $BATS_TEST_TMPDIR/scontrol, which prints TEXT
# (default: Slurm's line for no reservation at all), and prints its path.
fake_scontrol() {
    local scontrol=$BATS_TEST_TMPDIR/scontrol
    printf '#!/bin/sh\nprintf "%%s\\n" "%s"\n' "${1:-No reservations in the system}" >"$scontrol"
    chmod +x "$scontrol"
    echo "$scontrol"
}
