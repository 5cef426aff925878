#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The tree for arm64 (Grace nodes), cross-built here by hack/build-arch with
# Debian's aarch64 compiler in Release with warnings as errors: everything it
# ships is an arm64 ELF file that runs (under qemu-aarch64-static), its pure
# unit tests pass as arm64 programs under qemu (ctest runs them through the
# toolchain's emulator), the loader cache tests among them on caches that
# arm64's own ldconfig wrote (and its fuzz tests, under AddressSanitizer), and
# cpack makes an arm64 .deb. Needs hack/install-deps (hack/deps/arm64.txt);
# no root.
#
# Not built here (a cross build leaves them out: SLURM_JAIL_MACHINE_TESTS):
# the root-level suites, health_sys_tests, whose trusted-path resolver opens
# files with openat2, a system call qemu-user 7.2 (Debian 12) does not
# emulate (ENOSYS), and the benchmarks. They need a real arm64 node.

load ../lib/file_build

setup_file() {
    # The front ends, the health checks and the tests that run under qemu.
    record_build build "hack/build-arch arm64 Release" \
        env SLURM_JAIL_BUILD_DIR="$SLURM_JAIL_BUILD_DIR" "$SLURM_JAIL_ROOT/hack/build-arch" arm64 Release
}

setup() {
    load /usr/lib/bats/bats-support/load.bash
    load /usr/lib/bats/bats-assert/load.bash
    b=$SLURM_JAIL_BUILD_DIR-arm64
}

# What the .deb ships, as built.
shipped=(plugin/chroot/chroot.so plugin/job_container/job_container_slurm_jail.so
    plugin/pam/pam_slurm_jail.so plugin/jail_check/slurm-jail-check
    health/slurm-jail-gpu-check health/slurm-jail-fs-check health/slurm-jail-nccl-check
    health/slurm-jail-nccl-submit health/slurm-jail-nccl-fabric)

assert_aarch64_elf() { # FILE
    run readelf -h "$1"
    assert_success
    assert_line --regexp '^ +Class: +ELF64$'
    assert_line --regexp '^ +Machine: +AArch64$'
}

# LABEL MIN: ctest -L LABEL under qemu passes every test, at least MIN of them.
check_ctest_label() {
    local label=$1 min=$2
    assert_built build
    # Each test is an arm64 program that ctest starts through the emulator.
    run bash -c "cd '$b' && ctest -L '$label' -N -V"
    assert_output --regexp 'Test command: [^ ]*qemu-aarch64-static '
    run bash -c "cd '$b' && ctest -L '$label' --output-on-failure"
    assert_ctest_passed "$min"
}

@test "arm64: hack/build-arch builds the product and its pure tests in Release with -Werror, for aarch64 nodes" {
    assert_built build
    run grep -E '^(CMAKE_BUILD_TYPE|SLURM_JAIL_WERROR|SLURM_PLUGIN_DIR|PAM_MODULE_DIR):' "$b/CMakeCache.txt"
    assert_line 'CMAKE_BUILD_TYPE:STRING=Release'
    assert_line 'SLURM_JAIL_WERROR:BOOL=ON'
    assert_line 'SLURM_PLUGIN_DIR:PATH=/usr/lib/aarch64-linux-gnu/slurm-wlm'
    assert_line 'PAM_MODULE_DIR:PATH=/lib/aarch64-linux-gnu/security'
    # Every source is compiled by the cross compiler, with -Werror.
    run bash -c "jq -r '.[].command' '$b/compile_commands.json' | awk '{print \$1}' | sort -u"
    assert_output "/usr/bin/aarch64-linux-gnu-g++
/usr/bin/aarch64-linux-gnu-gcc"
    run bash -c "jq -r '.[].command' '$b/compile_commands.json' | grep -vc -- ' -Werror '"
    assert_output 0
    # What needs root and this machine is left out of a cross build.
    run bash -c "jq -r '.[].file' '$b/compile_commands.json' | grep -E '/(bench/|tests/unit/jail_view_test)'"
    assert_output ""
}

@test "arm64: chroot.so, the job container plugin, pam_slurm_jail.so and every program are aarch64 ELF files" {
    assert_built build
    local f
    for f in "${shipped[@]}"; do
        [ -f "$b/$f" ] || fail "$f was not built in $b"
        assert_aarch64_elf "$b/$f"
    done
    # The host cannot run them: they are not x86-64 programs in disguise.
    run "$b/plugin/jail_check/slurm-jail-check" --help
    assert_failure
}

@test "arm64: slurm-jail-check and the health programs run under qemu-aarch64-static (--help)" {
    assert_built build
    local f
    for f in plugin/jail_check/slurm-jail-check health/slurm-jail-gpu-check \
        health/slurm-jail-nccl-check health/slurm-jail-nccl-submit; do
        run qemu-aarch64-static "$b/$f" --help
        assert_success
        assert_output --partial "Usage: "
    done
}

@test "arm64: the pure unit tests (ctest -L unit, the health checks' among them) pass as arm64 programs under qemu" {
    check_ctest_label unit 250
    assert_output --partial 'NcclOutput.'
}

@test "arm64: the loader cache tests read caches that arm64's ldconfig wrote over arm64 fake NVIDIA drivers" {
    assert_built build
    # The fake driver, as NVIDIA's arm64 packages ship it: arm64 ELF, real soname.
    local cuda=$b/tests/fakes/nvidia-driver/550.54.15/lib/libcuda.so.550.54.15
    assert_aarch64_elf "$cuda"
    run readelf -d "$cuda"
    assert_output --partial 'Library soname: [libcuda.so.1]'
    # This machine's ldconfig cannot index it: the tests need arm64's.
    local r=$BATS_TEST_TMPDIR/x86 arm=$b/arm64-root
    mkdir -p "$r/usr/lib/aarch64-linux-gnu" "$r/etc"
    cp "$cuda" "$r/usr/lib/aarch64-linux-gnu/"
    echo /usr/lib/aarch64-linux-gnu >"$r/etc/ld.so.conf"
    run /sbin/ldconfig -X -r "$r" -C /ld.so.cache -f /etc/ld.so.conf
    assert_success
    run /sbin/ldconfig -p -C "$r/ld.so.cache"
    assert_line --index 0 "0 libs found in cache \`$r/ld.so.cache'"
    # The fixture runs arm64's ldconfig under qemu and reads the arm64 root.
    run grep -o 'SJAIL_TEST_[A-Z_]*=[^ ]*' "$b/tests/unit/CMakeFiles/gpu_unit_tests.dir/flags.make"
    assert_line "SJAIL_TEST_LDCONFIG=\\\"$arm/sbin/ldconfig\\\""
    assert_line --regexp '^SJAIL_TEST_EMULATOR=.*/qemu-aarch64-static'
    assert_line "SJAIL_TEST_MACHINE_ROOT=\\\"$arm\\\""
    # The arm64 root's own cache: arm64 entries only, libc among them.
    run qemu-aarch64-static "$arm/sbin/ldconfig" -p -C "$arm/etc/ld.so.cache"
    assert_success
    assert_line --regexp '^[[:space:]]libc\.so\.6 \(libc6,AArch64\) => /lib/aarch64-linux-gnu/libc\.so\.6$'
    refute_output --regexp '\((libc6|libc6,x86-64)\) =>'
    # The tests that build caches over the fake drivers and look the driver
    # up for this build's (aarch64) loader, read the arm64 root's cache, and
    # the parser under AddressSanitizer and UBSan fed such caches cut short.
    run bash -c "cd '$b' && ctest --output-on-failure -R '^(LdCache\.GeneratedCacheListsTheFakeDriverAndLibc|LdCache\.HostCacheMatchesLdconfigPrint|GpuDriverSelect\.CandidatesComeFromARealCacheInLoaderOrder|LdCacheArch\.AnAarch64CacheIsReadAndTheAarch64LoaderFindsItsDriver|Arch\.TheBuildsArchitectureIsThisMachines|LdCacheFuzz\..*)\$'"
    assert_success
    assert_output --partial '100% tests passed, 0 tests failed out of 9'
}

@test "arm64: cpack makes slurm-jail_0.1.0+slurm22.05_arm64.deb of arm64 files, for arm64 nodes" {
    assert_built build
    rm -f "$b"/slurm-jail_*.deb
    run bash -c "cd '$b' && cpack -G DEB"
    assert_success
    local deb=$b/slurm-jail_0.1.0+slurm22.05_arm64.deb
    [ -f "$deb" ] || fail "cpack made $(ls "$b"/*.deb 2>/dev/null), not $deb"
    run dpkg-deb -f "$deb" Package Architecture Depends
    assert_success
    assert_output "Package: slurm-jail
Architecture: arm64
Depends: slurmd (>= 22.05), slurmd (<< 22.06~), libslurm38, libpam0g"
    run bash -c "dpkg-deb -c '$deb' | awk '{print \$6}'"
    assert_line ./usr/lib/aarch64-linux-gnu/slurm-wlm/chroot.so
    assert_line ./usr/lib/aarch64-linux-gnu/slurm-wlm/job_container_slurm_jail.so
    assert_line ./lib/aarch64-linux-gnu/security/pam_slurm_jail.so
    refute_output --partial x86_64-linux-gnu
    # Every ELF file in it is for aarch64 (cpack strips them with the arm64 strip).
    local dir=$BATS_TEST_TMPDIR/deb f n=0
    dpkg-deb -x "$deb" "$dir"
    while IFS= read -r f; do
        [ "$(head -c 4 "$f")" = $'\x7fELF' ] || continue
        assert_aarch64_elf "$f"
        n=$((n + 1))
    done < <(find "$dir" -type f)
    [ "$n" -eq "${#shipped[@]}" ] || fail "the .deb holds $n ELF files, not ${#shipped[@]}"
}
