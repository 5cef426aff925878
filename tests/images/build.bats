#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # $images, $root come from helpers.bash
# The images build with podman (cold on a fresh machine), rebuild from the
# layer cache, and their entrypoints behave as docs/contract.md says.

load helpers

names=(build jail populate-jail worker login)

setup_file() {
    # one source revision for both builds, even if HEAD moves meanwhile
    SLURM_JAIL_IMAGES_REV=$(git -C "$root" rev-parse HEAD)
    export SLURM_JAIL_IMAGES_REV
}

image_ids() {
    local n
    for n in "${names[@]}"; do
        echo "$n $(podman image inspect --format '{{.Id}}' "localhost/slurm-jail/$n:latest")"
    done
}

@test "images: all images build with podman (--pull=never, Debian mirror only)" {
    run "$images/build-images"
    assert_success
    local line
    for line in "${lines[@]}"; do note "$line"; done
    for n in "${names[@]}"; do
        assert_output --regexp "build-images: $n built in [0-9.]+ s"
    done
    # the default release's images: one image under the release tag, the
    # version tag and :latest (the chart's default tag is the release tag)
    local version release n
    version=$(sed -n 's/^project([^)]*VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
    # shellcheck source=../../hack/lib/slurm-releases.sh
    release=$(. "$root/hack/lib/slurm-releases.sh" && echo "$SLURM_JAIL_DEFAULT_RELEASE")
    for n in "${names[@]}"; do
        assert_equal "$(podman image inspect --format '{{.Id}}' "localhost/slurm-jail/$n:$version-slurm$release")" \
            "$(podman image inspect --format '{{.Id}}' "localhost/slurm-jail/$n:latest")"
        assert_equal "$(podman image inspect --format '{{.Id}}' "localhost/slurm-jail/$n:$version")" \
            "$(podman image inspect --format '{{.Id}}' "localhost/slurm-jail/$n:latest")"
    done
    # that release's Slurm in the worker and in the jail, and the job
    # container plugin the release's slurmd loads
    run podman run --rm --network none localhost/slurm-jail/worker:latest sh -c 'slurmd -V; slurmctld -V'
    assert_success
    assert_equal "${#lines[@]}" 2
    [[ ${lines[0]} =~ ^slurm-wlm\ ${release//./\\.}\.[0-9]+$ ]] || fail "slurmd -V: ${lines[0]}"
    [[ ${lines[1]} =~ ^slurm-wlm\ ${release//./\\.}\.[0-9]+$ ]] || fail "slurmctld -V: ${lines[1]}"
    # (the client commands want a slurm.conf even for -V from 24.11 on)
    run podman run --rm --network none --entrypoint dpkg-query localhost/slurm-jail/jail:latest \
        -W -f '${Version}' slurm-client
    assert_success
    assert_output --regexp "^$release\.[0-9]+-"
    run podman run --rm --network none localhost/slurm-jail/worker:latest \
        sh -c 'ls /usr/lib/x86_64-linux-gnu/slurm-wlm/ | grep -E "^(job_container|namespace)_slurm_jail\.so$"'
    assert_success
    case $release in
        22.05 | 24.11) assert_output job_container_slurm_jail.so ;;
        *) assert_output namespace_slurm_jail.so ;; # 25.11 and later
    esac
    # the libslurm pam_slurm_jail.so dlopen()s is installed in the login image
    run podman run --rm --network none localhost/slurm-jail/login:latest sh -c \
        'so=$(grep -ao "libslurm\.so\.[0-9]*" /usr/lib/x86_64-linux-gnu/security/pam_slurm_jail.so | head -1)
         echo "$so"; test -e "/usr/lib/x86_64-linux-gnu/$so"'
    assert_success
    assert_output --regexp '^libslurm\.so\.[0-9]+$'
    # su enters the jail on a worker (slurmd's su for --get-user-env): its
    # session stack ends with pam_slurm_jail.so, which is in PAM's directory
    # with its libraries
    run podman run --rm --network none localhost/slurm-jail/worker:latest sh -c \
        'grep "^session" /etc/pam.d/su | tail -1
         grep "^session" /etc/pam.d/su-l | tail -1
         ldd /usr/lib/x86_64-linux-gnu/security/pam_slurm_jail.so | grep "not found" || echo libraries-found'
    assert_success
    assert_line --index 0 --regexp '^session +required +pam_slurm_jail\.so node=compute no_job=private$'
    assert_line --index 1 --regexp '^session +required +pam_slurm_jail\.so node=compute no_job=private$'
    assert_line --index 2 libraries-found
    # srun --mpi=pmix: each PMIx plugin of Slurm's names Debian's PMIx
    # directory, and the libpmix.so it opens there is a file, in the worker
    # (slurmstepd) and in the jail (srun)
    local image
    for image in worker jail; do
        run podman run --rm --network none --entrypoint sh "localhost/slurm-jail/$image:latest" -c \
            'lib=/usr/lib/x86_64-linux-gnu/pmix2/lib
             for p in /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix_v*.so; do
                 [ -e "$p" ] || { echo no-pmix-plugin; exit 0; }
                 grep -qaF "$lib" "$p" && test -f "$(readlink -f "$lib/libpmix.so")" &&
                     echo "${p##*/} opens $lib/libpmix.so: there"
             done'
        assert_success
        case $release in
            22.05 | 24.11) assert_output --regexp '^mpi_pmix_v[0-9]+\.so opens /usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix\.so: there$' ;;
            *) assert_output no-pmix-plugin ;; # Debian's Slurm 26.05 has none
        esac
    done
    # what each image must contain
    run podman run --rm --network none --entrypoint cat localhost/slurm-jail/jail:latest /etc/slurm-jail-release
    assert_output "SLURM_JAIL_VERSION=$version"
    # the container runtimes for jobs: rootless podman (newuidmap setuid, the
    # users' subordinate ids, the store in the job's /tmp) and Charliecloud
    run podman run --rm --network none --entrypoint sh localhost/slurm-jail/jail:latest -c \
        'for p in podman runc ch-run squashfuse mksquashfs fusermount3; do command -v $p >/dev/null || echo "missing $p"; done
         stat -c "%U %A" /usr/bin/newuidmap /usr/bin/newgidmap; grep -c "^testuser:[0-9]*:65536$" /etc/subuid /etc/subgid
         sed -n "s/^rootless_storage_path = //p" /etc/containers/storage.conf; test -e /etc/mtab && echo mtab'
    assert_success
    assert_output 'root -rwsr-xr-x
root -rwsr-xr-x
/etc/subuid:1
/etc/subgid:1
"/tmp/containers-$UID/storage"
mtab'
    # enroot's settings for pyxis (enroot itself is the admin's to add):
    # its files in the job's /tmp, our GPU hook, not enroot's 98-nvidia.sh
    run podman run --rm --network none --entrypoint sh localhost/slurm-jail/jail:latest -c \
        'sed -n "s/^ENROOT_DATA_PATH  *//p" /etc/enroot/enroot.conf
         test -x /etc/enroot/hooks.d/50-slurm-jail-nvidia.sh && echo hook
         test -e /etc/enroot/hooks.d/98-nvidia.sh || echo no-98-nvidia'
    assert_success
    assert_output '/tmp/enroot-${UID}/data
hook
no-98-nvidia'
    run podman run --rm --network none localhost/slurm-jail/worker:latest \
        sh -c 'test -f /usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so && command -v slurmd slurmctld slurmdbd munged
            if command -v slurm-jail-gpu-check; then slurm-jail-gpu-check --help >/dev/null && echo health-ok; fi'
    assert_success
    if [ -n "$(git -C "$root" ls-tree "$SLURM_JAIL_IMAGES_REV" -- health/CMakeLists.txt)" ]; then
        assert_line health-ok # the health tools ship once health/ exists
    fi
    run podman run --rm --network none --entrypoint sh localhost/slurm-jail/populate-jail:latest \
        -c 'cat /jail-rootfs/etc/slurm-jail-release && stat -c "%u:%g" /jail-rootfs/home/testuser && command -v rsync'
    assert_success
    assert_line --index 1 1000:1000
    # no host key is baked into the login image: they come from a mount
    run podman run --rm --network none localhost/slurm-jail/login:latest sh -c 'ls /etc/ssh/ssh_host_* 2>/dev/null'
    assert_failure
}

@test "images: a second build comes from the layer cache (same image ids)" {
    local before start
    before=$(image_ids)
    start=$EPOCHREALTIME
    run "$images/build-images"
    assert_success
    note "warm rebuild of all images: $(elapsed_since "$start") s"
    local line
    for line in "${lines[@]}"; do note "  $line"; done
    assert_equal "$(image_ids)" "$before"
}

@test "images: every Containerfile takes ARG BASE_IMAGE (nccl-tests: CUDA_BASE_IMAGE); a missing base fails clearly" {
    local f
    for f in "$images"/*/Containerfile; do
        if [ "$f" = "$images/nccl-tests/Containerfile" ]; then
            # built on a CUDA devel image the admin provides, not on our base
            grep -q '^ARG CUDA_BASE_IMAGE=' "$f" || fail "$f lacks ARG CUDA_BASE_IMAGE"
            continue
        fi
        grep -q '^ARG BASE_IMAGE=' "$f" || fail "$f lacks ARG BASE_IMAGE"
        # shellcheck disable=SC2016 # a literal ${BASE_IMAGE}
        grep -qF 'FROM ${BASE_IMAGE}' "$f" || fail "$f does not build FROM \${BASE_IMAGE}"
    done
    run "$images/build-images" --base-image localhost/sjtest-no-such-base:1 login
    assert_failure
    assert_output --partial 'base image localhost/sjtest-no-such-base:1 is missing'
}

@test "images: build-images refuses a Slurm release it cannot build, naming the supported ones" {
    run "$images/build-images" --slurm 25.05 worker
    assert_failure 2
    assert_output --partial "unknown Slurm release '25.05'; supported: 22.05 24.11 26.05"
}

@test "images: every program has --help and a man page" {
    run podman run --rm --network none localhost/slurm-jail/worker:latest --help
    assert_success
    assert_output --partial 'Usage: slurm-jail-entrypoint'
    run podman run --rm --network none localhost/slurm-jail/login:latest --help
    assert_success
    assert_output --partial 'Usage: slurm-jail-login-entrypoint'
    run podman run --rm --network none localhost/slurm-jail/populate-jail:latest --help
    assert_success
    assert_output --partial 'Usage: populate-jail'
    run podman run --rm --network none --entrypoint sh localhost/slurm-jail/populate-jail:latest \
        -c 'slurm-jail-backup --help && restic version && test -f /usr/local/share/man/man8/slurm-jail-backup.8'
    assert_success
    assert_output --partial 'Usage: slurm-jail-backup backup'
    assert_output --regexp 'restic [0-9]+\.[0-9]+\.[0-9]+'
    run podman run --rm --network none --entrypoint sh localhost/slurm-jail/jail:latest \
        -c 'add-jail-users --help && finalize-rootfs --help && slurm-pmix-library --help'
    assert_success
    assert_output --partial 'Usage: add-jail-users'
    assert_output --partial 'Usage: finalize-rootfs VERSION'
    assert_output --partial 'Usage: slurm-pmix-library'
    for tool in build-base build-images; do
        run "$images/$tool" --help
        assert_success
        assert_output --partial "Usage: $tool"
    done
    local page
    for page in "$images"/*/man/*.8 "$images"/man/*.8; do
        assert_man_clean "$page"
    done
    # the pages ship in the images too
    podman run --rm --network none localhost/slurm-jail/worker:latest \
        test -s /usr/local/share/man/man8/slurm-jail-entrypoint.8
    podman run --rm --network none localhost/slurm-jail/login:latest \
        test -s /usr/local/share/man/man8/slurm-jail-login-entrypoint.8
}

@test "images: entrypoints name a missing input and how to provide it" {
    run podman run --rm --network none -e SLURM_JAIL_WAIT_TIMEOUT=2 localhost/slurm-jail/worker:latest
    assert_failure 1
    assert_output --partial 'no munge key at /etc/munge-secret/munge.key after 2 s; mount the munge key Secret'
    run podman run --rm --network none -e SLURM_JAIL_WAIT_TIMEOUT=2 localhost/slurm-jail/login:latest
    assert_failure 1
    assert_output --partial 'no host keys /etc/ssh/host-keys/ssh_host_*_key; mount them'
}
