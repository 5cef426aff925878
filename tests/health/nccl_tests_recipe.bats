#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# images/nccl-tests: the build recipe for the jail's all_reduce_perf. No CUDA
# toolkit can be had here, so install-nccl-tests runs against stand-ins for
# nvcc and nccl-tests' make that build a real ELF program linked against a
# real (tiny) libnccl.so.2; everything the script checks and lays out is real.

load helpers

RECIPE=$SLURM_JAIL_ROOT/images/nccl-tests
PREFIX=/usr/lib/slurm-jail/nccl-tests

setup() {
    T=$BATS_TEST_TMPDIR
    mkdir -p "$T/cuda/bin" "$T/nccl/include" "$T/nccl/lib" "$T/src/src" "$T/bin"
    printf '#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.88"\n' >"$T/cuda/bin/nvcc"
    chmod 0755 "$T/cuda/bin/nvcc"
    echo 'int ncclGetVersion(int *v) { *v = 22809; return 0; }' >"$T/nccl.c"
    gcc -shared -fPIC -Wl,-soname,libnccl.so.2 -o "$T/nccl/lib/libnccl.so.2.28.9" "$T/nccl.c"
    ln -s libnccl.so.2.28.9 "$T/nccl/lib/libnccl.so.2"
    ln -s libnccl.so.2 "$T/nccl/lib/libnccl.so"
    : >"$T/nccl/include/nccl.h"
    printf '#define NCCL_TESTS_VERSION "2.19.6"\n' >"$T/src/src/common.h"
    # nccl-tests' make, as the recipe calls it: links all_reduce_perf against
    # NCCL_HOME's libnccl (the link sees LD_RUN_PATH, as nvcc's does).
    cat >"$T/bin/make" <<'MAKE'
#!/bin/sh
printf '%s\n' "$@" >"$FAKE_MAKE_ARGS"
for a; do
    case $a in BUILDDIR=*) build=${a#BUILDDIR=} ;; NCCL_HOME=*) nccl=${a#NCCL_HOME=} ;; esac
done
printf 'int ncclGetVersion(int *);\nint main(void) { int v; return ncclGetVersion(&v); }\n' >"$build/main.c"
exec gcc -o "$build/all_reduce_perf" "$build/main.c" -L"$nccl/lib" -lnccl ${FAKE_MAKE_LDFLAGS:-}
MAKE
    chmod 0755 "$T/bin/make"
}

install_nccl_tests() {
    env PATH="$T/bin:$PATH" FAKE_MAKE_ARGS="$T/make-args" CUDA_HOME="$T/cuda" NCCL_HOME="$T/nccl" \
        NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 BUILT_FROM=cuda:13.0-devel-test \
        "$RECIPE/install-nccl-tests" "$T/src" "$T/out"
}

@test "the recipe builds all_reduce_perf without MPI and lays it out with its libnccl.so.2" {
    run install_nccl_tests
    assert_success
    run cat "$T/make-args"
    assert_line src.build
    assert_line MPI=0
    assert_line BIN_FILES_LIST=all_reduce
    assert_line "NCCL_HOME=$T/nccl"
    assert_line "CUDA_HOME=$T/cuda"
    assert_line NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90
    run stat -c '%a %F' "$T/out$PREFIX/bin/all_reduce_perf" "$T/out$PREFIX/lib/libnccl.so.2"
    assert_output '755 regular file
644 regular file'
    # It finds the libnccl.so.2 next to it through its RUNPATH, and runs.
    run readelf -d "$T/out$PREFIX/bin/all_reduce_perf"
    assert_output --regexp 'RUNPATH.*\[\$ORIGIN/\.\./lib\]'
    run env -u LD_LIBRARY_PATH ldd "$T/out$PREFIX/bin/all_reduce_perf"
    assert_line --regexp "libnccl.so.2 => $T/out$PREFIX/bin/\.\./lib/libnccl.so.2 "
    run env -u LD_LIBRARY_PATH "$T/out$PREFIX/bin/all_reduce_perf"
    assert_success
    run cat "$T/out$PREFIX/BUILD-INFO"
    assert_line 'nccl-tests 2.19.6 (all_reduce_perf, MPI=0)'
    assert_line "NCCL 2.28.9 (lib/libnccl.so.2, from $T/nccl/lib/libnccl.so.2)"
    assert_line 'Cuda compilation tools, release 13.0, V13.0.88'
    assert_line --regexp '^built in cuda:13.0-devel-test; needs glibc 2\.[0-9]+, GLIBCXX_none$'
}

@test "the recipe refuses what would not work in the jail, naming the fix" {
    printf '#define NCCL_TESTS_VERSION "2.18.0"\n' >"$T/src/src/common.h"
    run install_nccl_tests
    assert_failure
    assert_output --partial "is nccl-tests '2.18.0', not 2.19.x: check out a v2.19 tag"
    printf '#define NCCL_TESTS_VERSION "2.19.6"\n' >"$T/src/src/common.h"

    FAKE_MAKE_LDFLAGS="-Wl,-rpath,/opt/elsewhere" run install_nccl_tests
    assert_failure
    assert_output --partial 'has no RUNPATH $ORIGIN/../lib'

    # A build on a newer distribution than the jail's Debian 12.
    printf '#!/bin/sh\n/usr/bin/objdump "$@"\necho "0000000000000000      DF *UND*  0000000000000000 (GLIBC_2.38) __isoc23_strtol"\n' >"$T/bin/objdump"
    chmod 0755 "$T/bin/objdump"
    run install_nccl_tests
    assert_failure
    assert_output --partial 'the build needs glibc 2.38 but the jail (Debian 12) has 2.36: use a CUDA base image on an older distribution'
    rm "$T/bin/objdump"

    rm "$T/cuda/bin/nvcc"
    run install_nccl_tests
    assert_failure
    assert_output --partial "no nvcc at $T/cuda/bin/nvcc: the base image must be a CUDA devel image"
}

@test "build-nccl-tests checks its inputs before building anything" {
    run "$RECIPE/build-nccl-tests" --help
    assert_success
    assert_output --partial '--cuda-base-image IMAGE'
    run "$RECIPE/build-nccl-tests" --source "$T/src" --output "$T/files"
    assert_failure
    assert_output "build-nccl-tests: error: --cuda-base-image is required: a CUDA devel image (Debian's main archive has no CUDA toolkit)"
    run "$RECIPE/build-nccl-tests" --cuda-base-image cuda:devel --source "$T/src"
    assert_failure
    assert_output --partial 'give exactly one of --output DIR (the files) and --tag TAG'
    printf '#define NCCL_TESTS_VERSION "2.20.0"\n' >"$T/src/src/common.h"
    run "$RECIPE/build-nccl-tests" --cuda-base-image cuda:devel --source "$T/src" --output "$T/files"
    assert_failure
    assert_output --partial "is nccl-tests '2.20.0', not 2.19.x"
    [ ! -e "$T/files" ]
}
