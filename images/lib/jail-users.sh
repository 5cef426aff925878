#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Makes this image resolve users and groups from the jail volume, so they
# live in one place (the jail's /etc/passwd and /etc/group):
#   jail-users.sh JAIL_PATH
# libnss-extrausers reads /var/lib/extrausers/{passwd,group,shadow}; these
# become symlinks into the jail (dangling until the volume is mounted).
# Local system accounts (root, munge, sshd) still come from /etc first.
set -eu
jail=${1:?usage: jail-users.sh JAIL_PATH}
mkdir -p /var/lib/extrausers
for db in passwd group shadow; do
    ln -sfn "$jail/etc/$db" "/var/lib/extrausers/$db"
done
sed -i -E 's/^(passwd|group|shadow):([[:space:]]+)files.*$/\1:\2files extrausers/' /etc/nsswitch.conf
grep -Eq '^passwd:[[:space:]]+files extrausers$' /etc/nsswitch.conf
