# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the image scripts and tests: points podman and buildah at the
# settings in images/podman/ unless the caller already chose others.
slurm_jail_images_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$slurm_jail_images_dir/podman/containers.conf}
export CONTAINERS_STORAGE_CONF=${CONTAINERS_STORAGE_CONF:-$slurm_jail_images_dir/podman/storage.conf}
