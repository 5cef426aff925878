#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Style and static checks over the whole tree: clang-format, clang-tidy, shellcheck.

setup() {
    load /usr/lib/bats/bats-support/load.bash
    load /usr/lib/bats/bats-assert/load.bash
    cd "$SLURM_JAIL_ROOT" || return 1
}

cpp_sources() { git ls-files '*.cpp' '*.hpp' '*.h' '*.cc'; }

shell_scripts() {
    git ls-files | while read -r f; do
        [ -f "$f" ] || continue
        case $f in
            *.sh | *.bash | *.bats | .ci/run) echo "$f" ;;
            *) head -c 64 "$f" | grep -qE '^#!.*(ba)?sh( |$)' && echo "$f" ;;
        esac
    done
}

@test "C++ is formatted with the repo's .clang-format" {
    run bash -c "git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' | xargs -r clang-format --dry-run -Werror"
    assert_success
}

@test "C++ sources are clang-tidy clean" {
    local db=$SLURM_JAIL_BUILD_DIR/compile_commands.json
    assert [ -f "$db" ]
    command -v clang-tidy >/dev/null || fail "clang-tidy is not installed (hack/install-deps installs it)"
    # clang-tidy exits non-zero on any warning (WarningsAsErrors) and on a
    # crash; xargs passes that on, so a missing or broken clang-tidy fails too.
    run bash -c "git ls-files '*.cpp' | grep -v '^tests/' | xargs -r -P 2 -n 4 clang-tidy --quiet -p '$SLURM_JAIL_BUILD_DIR' 2>&1"
    assert_success
    refute_output --regexp '(warning|error):'
}

@test "shell scripts are shellcheck clean" {
    run bash -c "$(declare -f shell_scripts); shell_scripts | grep -v '\.bats$' | xargs -r shellcheck -x"
    assert_success
}
