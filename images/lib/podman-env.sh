# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the image scripts and tests: points podman and buildah at the
# settings in images/podman/ unless the caller already chose others.
# Storage stays podman's own (the machine's storage.conf, else its defaults:
# /var/lib/containers/storage, overlay). podman records the graph driver in
# its database on its first run on a machine; a podman that names another
# one (a storage.conf of ours with `driver =`, where the first run had none)
# starts each container's cleanup process against that record, the cleanup
# fails ("database configuration mismatch") and every `podman run` then
# waits 20 s for an exit code.
slurm_jail_images_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$slurm_jail_images_dir/podman/containers.conf}
