# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# 'up --pyxis': NVIDIA pyxis (srun --container-image) over enroot, as an
# admin installs them beside chroot.so (docs/pyxis.md), from what
# hack/build-pyxis-enroot built ($SLURM_JAIL_PYXIS_DIR, default
# .tools/pyxis-enroot in the checkout):
#   - the jail: the Debian packages enroot needs (images/jail/enroot/
#     packages.txt), enroot's tree (OUT/enroot-root, /usr/local and
#     /etc/enroot) without enroot's GPU hook 98-nvidia.sh, the jail image's
#     enroot.conf (enroot's files in the job's /tmp) and GPU hook;
#   - spank_pyxis.so at the same path on the nodes and in the jail (srun
#     and sbatch load plugstack.conf's plugins inside the jail too);
#   - plugstack.conf: chroot.so's line first, then pyxis's;
#   - pyxis's runtime_path (where slurmstepd, as root, makes and chowns a
#     directory per user): /var/lib/pyxis, a root-owned directory of each
#     node (nodes/NAME/pyxis), bound by chroot.so at the same path in the
#     jail (bind=), so that no path root walks there is one a user controls.
# --pyxis implies --containers (/dev/fuse for squashfuse; rootless podman,
# whose images 'enroot import podman://' turns into SquashFS files).

LC_ENROOT_DIR=$LC_ROOT/images/jail/enroot
# Where pyxis keeps its per-user directories, on the node and in the jail.
LC_PYXIS_RUNTIME=/var/lib/pyxis

pyxis_on() { [ -f "$LC_STATE/pyxis" ]; }

# The build output hack/build-pyxis-enroot made (its own default, or
# $SLURM_JAIL_PYXIS_DIR).
pyxis_build_dir() { echo "${SLURM_JAIL_PYXIS_DIR:-$LC_ROOT/.tools/pyxis-enroot}"; }
pyxis_plugin_file() { echo "$(pyxis_build_dir)/pyxis-$(cluster_release)/spank_pyxis.so"; }
enroot_root_dir() { echo "$(pyxis_build_dir)/enroot-root"; }

# check_pyxis_build: dies, saying how to build it, unless the build output
# has enroot and pyxis for the cluster's Slurm release.
check_pyxis_build() {
    local hint
    hint="build it with: hack/build-pyxis-enroot --slurm $(cluster_release) (or point SLURM_JAIL_PYXIS_DIR at its output)"
    [ -x "$(enroot_root_dir)/usr/local/bin/enroot" ] || die "--pyxis: no enroot in $(enroot_root_dir); $hint"
    [ -f "$(pyxis_plugin_file)" ] || die "--pyxis: no $(pyxis_plugin_file); $hint"
}

# The chroot.so setting (appended to its plugstack line) and pyxis's line.
pyxis_chroot_args() { if pyxis_on; then echo " bind=$LC_PYXIS_RUNTIME"; fi; }
pyxis_plugstack_line() {
    if pyxis_on; then echo "required spank_pyxis.so runtime_path=$LC_PYXIS_RUNTIME"; fi
}

# Host directories the nodes bind their runtime_path onto.
pyxis_host_mountpoints() { if pyxis_on; then echo "$LC_PYXIS_RUNTIME"; fi; }

# enroot_packages: the Debian packages of the list, one per line.
enroot_packages() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$LC_ENROOT_DIR/packages.txt"; }

# install_enroot_tree JAIL: enroot's files (root's), not its GPU hook,
# which runs nvidia-container-cli on the node's paths; directories that
# are there already keep their owner and mode.
install_enroot_tree() {
    local j=$1
    tar -C "$(enroot_root_dir)" --owner=0 --group=0 --exclude=./etc/enroot/hooks.d/98-nvidia.sh -cf - . |
        tar -C "$j" --no-overwrite-dir -xf -
    rm -f "$j/etc/enroot/hooks.d/98-nvidia.sh"
    install -m 0644 "$LC_ENROOT_DIR/enroot.conf" "$j/etc/enroot/enroot.conf"
    install -m 0755 "$LC_ENROOT_DIR/hooks.d/50-slurm-jail-nvidia.sh" "$j/etc/enroot/hooks.d/"
}

# install_pyxis_plugin: spank_pyxis.so in the nodes' PluginDir and the
# jail's (install_plugin's rsync of the PluginDir leaves it alone).
install_pyxis_plugin() {
    pyxis_on || return 0
    replace_file "$(pyxis_plugin_file)" "$LC_STATE/plugins/spank_pyxis.so"
    replace_file "$(pyxis_plugin_file)" "$(jail_dir)$LC_PLUGIN_DIR/spank_pyxis.so"
}

# install_pyxis: everything above, into a freshly populated jail.
install_pyxis() {
    local j packages=()
    pyxis_on || return 0
    j=$(jail_dir)
    mapfile -t packages < <(enroot_packages)
    install_into_jail "${packages[@]}"
    install_enroot_tree "$j"
    # The mount point of chroot.so's bind= (root's, as it demands).
    install -d -m 0755 -o root -g root "$j$LC_PYXIS_RUNTIME"
    install_pyxis_plugin
}

# remove_pyxis_node_state: what pyxis left in the nodes' runtime_path
# (its per-user directories), once the nodes are gone.
remove_pyxis_node_state() { rm -rf --one-file-system "$LC_STATE"/nodes/*/pyxis; }
