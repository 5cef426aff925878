# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Running mmdebstrap (and apt) robustly, shared by hack/jail-rootfs and
# images/build-base. Sourced; defines functions only.
#
#   run_mmdebstrap PROG ARGS...   mmdebstrap ARGS with clean descriptors and retries
#   without_inherited_fds CMD...  run CMD with every descriptor above 2 closed
#
# Settings: MMDEBSTRAP_ATTEMPTS (whole builds, default 3) and
# MMDEBSTRAP_APT_RETRIES (apt's retries per download, default 5).
#
# Why: apt hands dpkg a status descriptor through `/bin/sh -c 'cat >&N'`, and
# dash only parses single-digit descriptors. A caller that leaves descriptors
# 3 and above open (Bats, CI runners, cron wrappers) pushes N past 9 and the
# build fails with "Bad fd number". Closing what we inherited keeps N small.

# Transient mirror trouble that is worth another try; anything else (an
# unknown package, a full disk) fails at once.
MMDEBSTRAP_TRANSIENT='Failed to fetch|Could not connect|Connection failed|Connection timed out|Temporary failure|Unable to connect|Undetermined Error|Hash Sum mismatch|Bad header line|Error reading from server|[^0-9]50[0-9] [A-Z]'
MMDEBSTRAP_ATTEMPTS=${MMDEBSTRAP_ATTEMPTS:-3}
MMDEBSTRAP_APT_RETRIES=${MMDEBSTRAP_APT_RETRIES:-5}

without_inherited_fds() {
    (
        local fd
        for fd in /proc/"$BASHPID"/fd/*; do
            fd=${fd##*/}
            if [ "$fd" -gt 2 ]; then
                eval "exec $fd>&-" 2>/dev/null || true
            fi
        done
        exec "$@"
    )
}

# mmdebstrap_failure_summary LOG: the lines that name what failed (URLs,
# packages), or the last error lines when none does.
mmdebstrap_failure_summary() {
    local lines
    lines=$(grep -E 'Failed to fetch|Unable to locate package|Unable to fetch|has no installation candidate|E: Package' "$1" | sort -u | head -n 5)
    [ -n "$lines" ] || lines=$(grep -E '^(E|W): ' "$1" | tail -n 5)
    [ -n "$lines" ] || lines=$(tail -n 5 "$1")
    printf '%s\n' "$lines"
}

# run_mmdebstrap PROG ARGS...: PROG names the caller in messages. apt itself
# retries each download (Acquire::Retries); a build that still fails for a
# transient reason is started again, up to MMDEBSTRAP_ATTEMPTS times.
# mmdebstrap's output (not --quiet: that hides apt's "Failed to fetch URL")
# goes to a log that is shown only when the build fails.
run_mmdebstrap() {
    local prog=$1 attempt log status
    shift
    log=$(mktemp)
    for ((attempt = 1; attempt <= MMDEBSTRAP_ATTEMPTS; attempt++)); do
        status=0
        without_inherited_fds mmdebstrap \
            --aptopt="Acquire::Retries \"$MMDEBSTRAP_APT_RETRIES\"" \
            --aptopt='Acquire::http::Timeout "30"' \
            "$@" </dev/null >"$log" 2>&1 || status=$?
        if [ "$status" -eq 0 ]; then
            rm -f "$log"
            return 0
        fi
        if ! grep -qE "$MMDEBSTRAP_TRANSIENT" "$log" || [ "$attempt" -eq "$MMDEBSTRAP_ATTEMPTS" ]; then
            break
        fi
        echo "$prog: mmdebstrap hit a transient mirror error (attempt $attempt of $MMDEBSTRAP_ATTEMPTS), retrying in $((attempt * 5)) s:" >&2
        mmdebstrap_failure_summary "$log" | sed 's/^/  /' >&2
        sleep $((attempt * 5))
    done
    tail -n 30 "$log" >&2
    echo "$prog: mmdebstrap failed after $attempt attempt(s); what failed:" >&2
    mmdebstrap_failure_summary "$log" | sed 's/^/  /' >&2
    rm -f "$log"
    return "$status"
}
