# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Where did a user's code run? Shared by 10-no-host-root.bats and
# 11-node-changes.bats (after helpers.bash).
#
# Two drop directories, writable by everyone: HOST_DROP exists only on the
# node's own root (the machine's /srv, which every node shares), JAIL_DROP
# only in the jail (its /srv: a job's /tmp and /var/tmp are its own). The user's code appends "LABEL-saw-ROOT" to `ran` in
# both, where ROOT is what it found at /: "jail" (the jail's marker file),
# "host-root" (a path that exists only on the host) or "elsewhere". Any file
# in HOST_DROP means something of the user's reached a node's own root.
# The settings are used by the .bats files; $output comes from bats' run.
# shellcheck disable=SC2034,SC2154

setup_drops() {
    local name=e2e-drop-$BATS_SUITE_TEST_NUMBER-$$
    HOST_DROP=/srv/$name-host
    JAIL_DROP=/srv/$name-jail
    install -d -m 1777 "$HOST_DROP" "$JAIL$JAIL_DROP"
    # Each exists on one side only.
    [ ! -e "$JAIL$HOST_DROP" ] && [ ! -e "$JAIL_DROP" ]
}

# setup_user_code_test: a test's setup: assertions, its working directory,
# the drops and the user's task script $T/task.sh (after `load user_code`).
setup_user_code_test() {
    load_assertions
    make_test_dir
    setup_drops
    user_script task.sh task
}

remove_drops() { rm -rf "${HOST_DROP:?}" "$JAIL${JAIL_DROP:?}"; }

# user_code LABEL: the user's shell code, reporting where it runs.
user_code() {
    cat <<EOF_CODE
#!/bin/sh
r=elsewhere
if [ -f $MARKER ]; then r=jail; fi
if [ -e $HOST_ONLY ]; then r=host-root; fi
for d in $HOST_DROP $JAIL_DROP; do echo "$1-saw-\$r" >>"\$d/ran"; done
EOF_CODE
}

# user_script NAME LABEL: the user's code as an executable file NAME in the
# test directory of the user's home (in the jail's /home, which the nodes
# also see at /home).
user_script() {
    user_code "$2" >"$HOST_HOME/$T/$1"
    chmod 0755 "$HOST_HOME/$T/$1"
    chown "$TEST_UID:$TEST_UID" "$HOST_HOME/$T/$1"
}

# perl5opt LABEL: the same code for PERL5OPT, so that plain /usr/bin/perl
# runs it with no file of the user's anywhere. PERL5OPT is split at
# whitespace, so the code has none.
perl5opt() {
    local code
    # shellcheck disable=SC2016 # perl, not shell
    code='-Mstrict;my$r="elsewhere";$r="jail"if-f"MARKER";$r="host-root"if-e"HOST_ONLY";'
    # shellcheck disable=SC2016
    code+='for("HOST_DROP","JAIL_DROP"){my$f;open($f,">>","$_/ran")&&print{$f}("LABEL-saw-$r\n")}exit'
    code=${code//MARKER/$MARKER}
    code=${code//HOST_ONLY/$HOST_ONLY}
    code=${code//HOST_DROP/$HOST_DROP}
    code=${code//JAIL_DROP/$JAIL_DROP}
    printf '%s' "${code//LABEL/$1}"
}

# Nothing of the user's ran or was written, on a node's root or in the jail.
assert_ran_nowhere() {
    local on_host in_jail
    on_host=$(find "$HOST_DROP" -mindepth 1 -printf '%f ' -exec cat {} \;)
    in_jail=$(find "$JAIL$JAIL_DROP" -mindepth 1 -printf '%f ' -exec cat {} \;)
    [ -z "$on_host" ] || { echo "the user's code reached a node's root: $on_host" >&2; return 1; }
    [ -z "$in_jail" ] || { echo "the user's code ran in the jail: $in_jail" >&2; return 1; }
}

# assert_ran_in_jail LABEL N: LABEL's code ran N times, always in the jail,
# and nothing reached a node's root.
assert_ran_in_jail() {
    local on_host
    on_host=$(find "$HOST_DROP" -mindepth 1 -printf '%f ' -exec cat {} \;)
    [ -z "$on_host" ] || { echo "the user's code reached a node's root: $on_host" >&2; return 1; }
    assert_equal "$(grep -c "^$1-saw-" "$JAIL$JAIL_DROP/ran")" "$2"
    assert_equal "$(grep -c "^$1-saw-jail$" "$JAIL$JAIL_DROP/ran")" "$2"
}

# The job id in sbatch's output ($output of bats' run).
submitted_job() { sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' <<<"$output"; }

# spool_has_no_job ID: no node keeps the job's spool directory (its batch
# script); slurmstepd removes it when the batch step ends.
spool_has_no_job() {
    [ -n "$1" ] && [ -z "$(find "$STATE"/nodes/*/spool -maxdepth 1 -name "$(printf 'job%05d' "$1")")" ]
}
