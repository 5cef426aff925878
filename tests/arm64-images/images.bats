#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # $images, $root come from ../images/helpers.bash
# The container images for arm64 (Grace) nodes: images/build-images --arch
# arm64 cross-compiles the plugins and health tools on this machine (build,
# the suite's aarch64 compiler) and builds the jail, populate-jail, worker and
# login images on an arm64 Debian base, their package installs running under
# qemu-user-static through binfmt_misc. Their programs then run here under
# qemu too. Needs root (binfmt_misc, podman), hack/install-deps, and about
# 20 minutes cold (the arm64 base and every package's maintainer scripts run
# emulated), which is why this suite is not in the default run.

load ../images/helpers
load ../lib/file_build

arm64_images=(jail populate-jail worker login)

setup_file() {
    # Registered here only if it was not: teardown_file takes back only ours.
    if "$root/hack/binfmt" status arm64 >/dev/null; then
        echo 0 >"$BATS_FILE_TMPDIR/registered-here"
    else
        "$root/hack/binfmt" register arm64
        echo 1 >"$BATS_FILE_TMPDIR/registered-here"
    fi
    SLURM_JAIL_IMAGES_REV=$(git -C "$root" rev-parse HEAD)
    export SLURM_JAIL_IMAGES_REV
    local release version
    # shellcheck source=../../hack/lib/slurm-releases.sh
    release=$(. "$root/hack/lib/slurm-releases.sh" && echo "$SLURM_JAIL_DEFAULT_RELEASE")
    version=$(sed -n 's/^project([^)]*VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
    echo "$version-slurm$release-arm64" >"$BATS_FILE_TMPDIR/tag"
    echo "$release" >"$BATS_FILE_TMPDIR/release"
    local start=$SECONDS
    record_build build "images/build-images --arch arm64" "$images/build-images" --arch arm64
    echo $((SECONDS - start)) >"$BATS_FILE_TMPDIR/build.seconds"
}

teardown_file() {
    if [ "$(cat "$BATS_FILE_TMPDIR/registered-here" 2>/dev/null)" = 1 ]; then
        "$root/hack/binfmt" unregister arm64
    fi
}

setup() {
    tag=$(cat "$BATS_FILE_TMPDIR/tag")
    release=$(cat "$BATS_FILE_TMPDIR/release")
}

# IMAGE PATH: PATH of IMAGE copied to $BATS_TEST_TMPDIR (without running it).
copy_out() {
    local ctr
    ctr=$(podman create --pull=never "$1" true)
    podman cp "$ctr:$2" "$BATS_TEST_TMPDIR/" || { podman rm -f "$ctr" >/dev/null; return 1; }
    podman rm -f "$ctr" >/dev/null
}

assert_aarch64_elf() { # FILE
    run readelf -h "$1"
    assert_success
    assert_line --regexp '^ +Machine: +AArch64$'
}

@test "arm64 images: build-images --arch arm64 builds every image for arm64 nodes; only the cross compiler is this machine's" {
    assert_built build
    local line
    while IFS= read -r line; do note "$line"; done < <(grep '^build-images: .* built in' "$BATS_FILE_TMPDIR/build.log")
    note "build-images --arch arm64: $(cat "$BATS_FILE_TMPDIR/build.seconds") s in all"
    local n
    for n in "${arm64_images[@]}"; do
        run podman image inspect --format '{{.Architecture}} {{.Os}}' "localhost/slurm-jail/$n:$tag"
        assert_success
        assert_output "arm64 linux"
    done
    run podman image inspect --format '{{.Architecture}}' "localhost/slurm-jail/build:$tag"
    assert_output "$(dpkg --print-architecture)"
    # No plain tags: :latest and :VERSION stay this machine's architecture's.
    run grep -c ' built in ' "$BATS_FILE_TMPDIR/build.log"
    assert_output 5
    for n in build "${arm64_images[@]}"; do
        run podman image inspect --format '{{range .RepoTags}}{{println .}}{{end}}' "localhost/slurm-jail/$n:$tag"
        assert_success
        assert_output "localhost/slurm-jail/$n:$tag"
    done
}

@test "arm64 images: the worker runs the release's slurmd, chroot.so and the health tools are AArch64 with their libraries installed" {
    assert_built build
    run podman run --rm --network none --arch arm64 "localhost/slurm-jail/worker:$tag" \
        sh -c 'uname -m; slurmd -V'
    assert_success
    assert_line --index 0 aarch64
    assert_line --index 1 --regexp "^slurm-wlm ${release//./\\.}\.[0-9]+$"
    local plugin_dir=/usr/lib/aarch64-linux-gnu/slurm-wlm
    run podman run --rm --network none --arch arm64 "localhost/slurm-jail/worker:$tag" \
        sh -c "ldd $plugin_dir/chroot.so /usr/sbin/slurm-jail-gpu-check /usr/sbin/slurm-jail-fs-check /usr/sbin/slurm-jail-check"
    assert_success
    refute_output --partial 'not found'
    run podman run --rm --network none --arch arm64 "localhost/slurm-jail/worker:$tag" slurm-jail-fs-check --help
    assert_success
    assert_output --partial 'Usage'
    copy_out "localhost/slurm-jail/worker:$tag" "$plugin_dir/chroot.so"
    assert_aarch64_elf "$BATS_TEST_TMPDIR/chroot.so"
}

@test "arm64 images: the login image's pam_slurm_jail.so is in arm64's PAM directory with its libraries" {
    assert_built build
    local module=/usr/lib/aarch64-linux-gnu/security/pam_slurm_jail.so
    run podman run --rm --network none --arch arm64 --entrypoint sh "localhost/slurm-jail/login:$tag" \
        -c "ldd $module; sshd -V 2>&1 | head -1"
    assert_success
    refute_output --partial 'not found'
    assert_output --partial OpenSSH
    copy_out "localhost/slurm-jail/login:$tag" "$module"
    assert_aarch64_elf "$BATS_TEST_TMPDIR/pam_slurm_jail.so"
}

@test "arm64 images: the jail is an arm64 root (its /bin/sh, Slurm client, chroot.so), which slurm-jail-check on this machine refuses by name" {
    assert_built build
    run podman run --rm --network none --arch arm64 --entrypoint sh "localhost/slurm-jail/jail:$tag" \
        -c 'uname -m; dpkg --print-architecture; dpkg-query -W -f "\${Version}" slurm-client'
    assert_success
    assert_line --index 0 aarch64
    assert_line --index 1 arm64
    assert_line --index 2 --regexp "^${release//./\\.}\.[0-9]+-"
    # The jail's files, unpacked as populate-jail would lay them out.
    local jail=$BATS_TEST_TMPDIR/jail ctr
    mkdir -m 0755 "$jail"
    ctr=$(podman create --pull=never "localhost/slurm-jail/jail:$tag" true)
    podman export "$ctr" | tar -x -C "$jail"
    podman rm -f "$ctr" >/dev/null
    # (/bin -> usr/bin and sh -> dash are relative links: they stay in the jail)
    assert_aarch64_elf "$(readlink -f "$jail/bin/sh")"
    assert_aarch64_elf "$jail/usr/lib/aarch64-linux-gnu/slurm-wlm/chroot.so"
    local check=${SLURM_JAIL_BUILD_DIR:-$root/build}/plugin/jail_check/slurm-jail-check
    [ -x "$check" ] || fail "$check is not built (tests/run-all builds it)"
    run "$check" --line "required chroot.so jail=$jail"
    assert_failure 1
    assert_output --partial "the jail $jail is aarch64 (its /bin/sh), but this node is x86-64"
}

@test "arm64 images: the populate-jail image carries the arm64 jail" {
    assert_built build
    run podman run --rm --network none --arch arm64 --entrypoint sh "localhost/slurm-jail/populate-jail:$tag" \
        -c 'uname -m; test -f /jail-rootfs/usr/lib/aarch64-linux-gnu/slurm-wlm/chroot.so && echo jail-has-chroot.so; rsync --version | head -1'
    assert_success
    assert_line --index 0 aarch64
    assert_line --index 1 jail-has-chroot.so
    assert_line --index 2 --partial 'rsync  version'
}

@test "arm64 images: build-base refuses another architecture this machine cannot run, and says how to fix it" {
    "$root/hack/binfmt" unregister arm64
    SLURM_JAIL_CACHE=$BATS_TEST_TMPDIR/cache run "$images/build-base" --arch arm64 --tar-only
    "$root/hack/binfmt" register arm64
    assert_failure
    assert_output --partial "this machine cannot run arm64 programs: register qemu-user-static's handler (hack/binfmt register arm64, as root)"
    [ ! -e "$BATS_TEST_TMPDIR/cache/debian-trixie-arm64-minbase.tar" ]
}
