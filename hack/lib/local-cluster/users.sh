# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The local cluster's test users, on the host and in the jail, all named
# PREFIX + role: PREFIXuser (UID, the user jobs run as), its supplementary
# group PREFIXextra (UID+1), a second user PREFIXother (UID+2, one user's job
# against another's) and PREFIXnojail (UID+8, on the host only: the SSH
# tests' user without a jail account). SLURM_JAIL_LOCAL_USERS=PREFIX:UID,
# default sj:5001; a cluster up beside another takes users of its own, so
# that neither's tests take the other's jobs or processes for their user's
# (tests/compat runs beside e2e with sjc:5021).
# Sourced by common.sh and by the e2e tests' helpers.
# shellcheck disable=SC2034

LC_USERS_DEFAULT=sj:5001
LC_USERS=${SLURM_JAIL_LOCAL_USERS:-$LC_USERS_DEFAULT}
if ! [[ $LC_USERS =~ ^[a-z][a-z0-9]{0,2}:[1-9][0-9]{3,5}$ ]]; then
    echo "SLURM_JAIL_LOCAL_USERS='$LC_USERS': write PREFIX:UID, a lower-case prefix of up to 3 characters (ps shows user names of up to 8) and the first of 9 free ids, e.g. sjc:5021" >&2
    # shellcheck disable=SC2317 # exit when not sourced
    return 2 2>/dev/null || exit 2
fi
LC_USER_PREFIX=${LC_USERS%%:*}
LC_USER=${LC_USER_PREFIX}user
LC_UID=${LC_USERS#*:}
LC_GROUP_EXTRA=${LC_USER_PREFIX}extra
LC_GID_EXTRA=$((LC_UID + 1))
LC_USER2=${LC_USER_PREFIX}other
LC_UID2=$((LC_UID + 2))
LC_USER_NOJAIL=${LC_USER_PREFIX}nojail
LC_UID_NOJAIL=$((LC_UID + 8))
