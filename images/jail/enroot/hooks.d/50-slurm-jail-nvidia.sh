#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# enroot hook: the node's NVIDIA driver and the selected GPUs in a container
# started in a job. Installed as /etc/enroot/hooks.d/50-slurm-jail-nvidia.sh
# in the jail, in place of enroot's 98-nvidia.sh, which the jail must not
# ship (it runs nvidia-container-cli, which the jail has not: see
# docs/pyxis.md).
#
# enroot runs each executable hooks.d/*.sh in name order when a container
# starts: as the user, in the container's new user and mount namespaces,
# before it switches into the container's root, which lies at
# $ENROOT_ROOTFS (writable at this point). What a hook appends to
# $ENROOT_MOUNTS (fstab lines) enroot mounts after the last hook with its
# own enroot-mount --root "$ENROOT_ROOTFS", which resolves every target
# inside the root (a symlink in the image cannot lead out of it) and makes
# the missing mount points (x-create). What a hook appends to
# $ENROOT_ENVIRON (KEY=VALUE lines, the last one of a key wins) is the
# container's environment. This hook touches nothing below $ENROOT_ROOTFS
# itself: it only writes those lines.
#
# What it gives the container (chroot.so has bound the node's driver at
# /usr/local/nvidia in the job's view, see chroot.so(8), GPU DRIVER):
#   - /usr/local/nvidia (lib64/, bin/), read-only;
#   - /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-uvm-tools and
#     /dev/nvidia-modeset, those the job's /dev has;
#   - /dev/nvidiaN for each GPU that NVIDIA_VISIBLE_DEVICES selects;
#   - LD_LIBRARY_PATH and PATH ending in /usr/local/nvidia/lib64 and
#     /usr/local/nvidia/bin (unless they hold them already), so that
#     libcuda.so.1, libnvidia-ml.so.1 and nvidia-smi are the node's.
#
# NVIDIA_VISIBLE_DEVICES, as the NVIDIA container toolkit reads it: from
# enroot's environment, else the last value the container's environment has
# (the image's, environ.d's, `enroot start -e`'s), as 98-nvidia.sh
# does. CUDA images set it to "all".
#   unset, empty, void  nothing: no driver, no GPU
#   none                the driver and the control devices, no GPU
#   all                 every /dev/nvidiaN of the job's /dev
#   0,1,...             /dev/nvidia0, /dev/nvidia1, ...: an index is the
#                       number of the device file (the GPU's minor number)
#   GPU-<uuid>,...      the GPUs of these UUIDs, through the kernel module's
#                       /proc/driver/nvidia/gpus/*/information
# Indexes and UUIDs may be mixed. MIG devices (MIG-<uuid>, 0:1) are not
# supported. A GPU the job's /dev has not is an error. Which GPUs a job may
# open is Slurm's business (the cgroup of gres/gpu with ConstrainDevices):
# this hook never widens what the job's own processes can reach, it binds
# only the paths named above. Ignored: NVIDIA_DRIVER_CAPABILITIES (the
# whole driver tree that chroot.so bound is given), NVIDIA_REQUIRE_* (no
# CUDA version check), NVIDIA_MIG_CONFIG_DEVICES, NVIDIA_MIG_MONITOR_DEVICES.
set -euo pipefail

readonly self=${0##*/}
readonly driver=/usr/local/nvidia
readonly default_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

die() {
    printf '%s: %s\n' "$self" "$*" >&2
    exit 1
}
note() { printf '%s: %s\n' "$self" "$*" >&2; }

for var in ENROOT_ROOTFS ENROOT_MOUNTS ENROOT_ENVIRON; do
    [ -n "${!var-}" ] || die "$var is not set: this is an enroot hook (enroot runs it when a container starts)"
done

# last_env KEY: the value of the last KEY= line of the container's
# environment (empty when none); returns 1 when there is none.
last_env() {
    local key=$1 line found=1 value=
    while IFS= read -r line || [ -n "$line" ]; do
        case $line in
            "$key="*)
                value=${line#*=}
                found=0
                ;;
        esac
    done <"$ENROOT_ENVIRON"
    printf '%s' "$value"
    return "$found"
}

if [ -z "${NVIDIA_VISIBLE_DEVICES+set}" ]; then
    NVIDIA_VISIBLE_DEVICES=$(last_env NVIDIA_VISIBLE_DEVICES) || :
fi
visible=${NVIDIA_VISIBLE_DEVICES#"${NVIDIA_VISIBLE_DEVICES%%[! ]*}"} # trim blanks
visible=${visible%"${visible##*[! ]}"}

usage_hint="set NVIDIA_VISIBLE_DEVICES to all, none, void, or a comma-separated list of GPU indexes (0,1: /dev/nvidia0, /dev/nvidia1) or GPU UUIDs (GPU-...), or unset it"

# ---- parse: everything is checked before anything is looked up ----
wanted=() # GPU numbers and lower-case UUIDs, in the order given
uuids=0
case $visible in
    "" | void) exit 0 ;;
    none | all) ;;
    *)
        # Only these characters ever reach a path or an fstab line below.
        if [[ ! $visible =~ ^[[:alnum:],:\ -]+$ ]]; then
            die "NVIDIA_VISIBLE_DEVICES=$(printf '%q' "$visible"): invalid characters; $usage_hint"
        fi
        IFS=, read -r -a items <<<"$visible,"
        for item in "${items[@]}"; do
            item=${item#"${item%%[! ]*}"} # trim blanks
            item=${item%"${item##*[! ]}"}
            if [[ $item =~ ^[0-9]{1,3}$ ]]; then
                wanted+=("$((10#$item))")
            elif [[ $item =~ ^GPU-[[:xdigit:]]{8}-[[:xdigit:]]{4}-[[:xdigit:]]{4}-[[:xdigit:]]{4}-[[:xdigit:]]{12}$ ]]; then
                wanted+=("${item,,}")
                uuids=$((uuids + 1))
            elif [[ $item =~ ^MIG- || $item =~ ^[0-9]+:[0-9]+$ ]]; then
                die "NVIDIA_VISIBLE_DEVICES=$visible: $item is a MIG device; MIG devices are not supported in containers here; $usage_hint"
            elif [ -z "$item" ]; then
                die "NVIDIA_VISIBLE_DEVICES=$visible: an empty item; $usage_hint"
            else
                die "NVIDIA_VISIBLE_DEVICES=$visible: $item is neither a GPU index nor a GPU UUID; $usage_hint"
            fi
        done
        ;;
esac

# enroot's own GPU hook would run after this one and fail (no
# nvidia-container-cli) or bind the driver a second time.
stock_hook=${ENROOT_SYSCONF_PATH:-/etc/enroot}/hooks.d/98-nvidia.sh
if [ -f "$stock_hook" ] && [ -x "$stock_hook" ]; then
    die "$stock_hook is installed too; the jail must not ship it (remove it): $self replaces it"
fi

# ---- the job's view ----
if [ ! -d "$driver/lib64" ]; then
    note "no NVIDIA driver in this job's view ($driver/lib64): the container gets no GPU"
    exit 0
fi

# char_dev PATH: PATH is a character device, not a symlink.
char_dev() { [ -c "$1" ] && [ ! -L "$1" ]; }

# The GPU device files of the job's /dev, by number.
present=()
for dev in /dev/nvidia[0-9]*; do
    n=${dev#/dev/nvidia}
    [[ $n =~ ^[0-9]{1,3}$ ]] && char_dev "$dev" && present+=("$((10#$n))")
done

selected=()
case $visible in
    none) ;;
    all) selected=(${present[@]+"${present[@]}"}) ;;
    *)
        declare -A minor_of=()
        if [ "$uuids" -gt 0 ]; then
            # GPU UUID -> minor number, from the kernel module's own table.
            for info in /proc/driver/nvidia/gpus/*/information; do
                [ -f "$info" ] || continue
                uuid='' minor=''
                while IFS=: read -r key value; do
                    value=${value//[[:space:]]/}
                    case $key in
                        "GPU UUID") uuid=${value,,} ;;
                        "Device Minor") minor=$value ;;
                    esac
                done <"$info"
                [[ $uuid =~ ^gpu- && $minor =~ ^[0-9]{1,3}$ ]] && minor_of[$uuid]=$((10#$minor))
            done
        fi
        for n in "${wanted[@]}"; do
            if [[ $n =~ ^gpu- ]]; then
                [ -n "${minor_of[$n]-}" ] ||
                    die "NVIDIA_VISIBLE_DEVICES=$visible: no GPU of this node has the UUID GPU-${n#gpu-} (nvidia-smi -L lists them)"
                n=${minor_of[$n]}
            fi
            char_dev "/dev/nvidia$n" ||
                die "NVIDIA_VISIBLE_DEVICES=$visible: GPU $n: the job's /dev has no /dev/nvidia$n (it has: ${present[*]:-no GPU}); $usage_hint"
            case " ${selected[*]-} " in
                *" $n "*) ;;
                *) selected+=("$n") ;;
            esac
        done
        ;;
esac

# ---- what the container gets ----
{
    printf '%s %s none x-create=dir,rbind,ro,nosuid,nodev,private\n' "$driver" "$driver"
    for dev in /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools /dev/nvidia-modeset; do
        if char_dev "$dev"; then
            printf '%s %s none x-create=file,bind,ro,nosuid,noexec,private\n' "$dev" "$dev"
        fi
    done
    for n in ${selected[@]+"${selected[@]}"}; do
        printf '/dev/nvidia%s /dev/nvidia%s none x-create=file,bind,ro,nosuid,noexec,private\n' "$n" "$n"
    done
} >>"$ENROOT_MOUNTS"

char_dev /dev/nvidiactl || note "the job's /dev has no /dev/nvidiactl: CUDA will find no GPU in the container"

# append_dir LIST DIR: LIST with DIR at its end, unless it holds DIR already.
append_dir() {
    case ":$1:" in
        *":$2:"*) printf '%s' "$1" ;;
        *) printf '%s' "${1:+$1:}$2" ;;
    esac
}
ld_path=$(last_env LD_LIBRARY_PATH) || :
path=$(last_env PATH) || path=$default_path
{
    printf 'LD_LIBRARY_PATH=%s\n' "$(append_dir "$ld_path" "$driver/lib64")"
    printf 'PATH=%s\n' "$(append_dir "$path" "$driver/bin")"
} >>"$ENROOT_ENVIRON"
