#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Style and static checks over the whole tree: clang-format, clang-tidy,
# shellcheck, and the include graph of the library and its front ends.

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
    # clang-tidy 22, whose checks skip the system headers (.clang-tidy);
    # SLURM_JAIL_CLANG_TIDY names another.
    local tidy=${SLURM_JAIL_CLANG_TIDY:-clang-tidy-22}
    command -v "$tidy" >/dev/null || fail "$tidy is not installed (hack/install-deps installs it)"
    # clang-tidy exits non-zero on any warning (WarningsAsErrors) and on a
    # crash; xargs passes that on, so a missing or broken clang-tidy fails too.
    # The sources this build compiles: a front end for another Slurm release
    # (namespace_slurm_jail.cpp against 22.05) would only meet its #error.
    run bash -c "git ls-files '*.cpp' | grep -v '^tests/' |
        grep -Fxf <(jq -r '.[].file' '$db' | sed 's|^$SLURM_JAIL_ROOT/||' | sort -u) |
        xargs -r -P $(nproc) -n 4 '$tidy' --quiet -p '$SLURM_JAIL_BUILD_DIR' 2>&1"
    assert_success
    refute_output --regexp '(warning|error):'
}

@test "shell scripts are shellcheck clean" {
    run bash -c "$(declare -f shell_scripts); shell_scripts | grep -v '\.bats$' | xargs -r shellcheck -x"
    assert_success
}

# The include graph: lib/sjail is one library that includes no Slurm header,
# its pure core/ includes nothing of sys/, and each front end in plugin/
# includes the library and its own folder, never another front end.
quoted_includes() { git grep -nE '^#include "' -- "$1"; }

@test "the jail library includes no Slurm header" {
    run git grep -nE '^#include <slurm/' -- 'lib/*'

    assert_failure 1
    assert_output ""
}

@test "the library's pure core includes nothing of its system layer" {
    run bash -c "$(declare -f quoted_includes); quoted_includes 'lib/sjail/core/*' | grep -v '\"sjail/core/'"
    assert_failure 1
    assert_output ""
}

# Within each layer the library is grouped by what it serves: gpu/ (the
# driver bound into the view) is used by node/ (the node's view), which is
# used by job/ (a job's namespaces); none includes what stands above it.
@test "the library's domains stand in order: gpu below node below job" {
    run bash -c "$(declare -f quoted_includes)
        quoted_includes 'lib/sjail/*/gpu/*' | grep -E '\"sjail/(core|sys)/(node|job)/'
        quoted_includes 'lib/sjail/*/node/*' | grep -E '\"sjail/(core|sys)/job/'
        true"
    assert_success
    assert_output ""
}

# lib/sjail/README.md is the library's map: a row per file, by the name
# below core/ or sys/ (`node/node_stamp`) or its last part where the domain
# heads the table; a file added without its row fails here.
@test "lib/sjail/README.md has a row for every file of the library" {
    local file name missing=""
    while IFS= read -r file; do
        name=${file#lib/sjail/*/}
        name=${name%.*}
        grep -qF -e "\`$name\`" -e "\`${name##*/}\`" -e "\`core/$name.hpp\`" lib/sjail/README.md ||
            missing+=" $file"
    done < <(git ls-files 'lib/sjail/core/*.[ch]pp' 'lib/sjail/sys/*.[ch]pp')
    [ -z "$missing" ] || fail "lib/sjail/README.md has no row for:$missing; add one to its core/ or sys/ table"
}

@test "front ends include the library and their own folder only" {
    local fe bad=""
    for fe in plugin/*/; do
        fe=${fe%/}
        # A quoted include is "sjail/..." or a bare name of a file in the front end's own folder.
        while IFS= read -r line; do
            local file=${line%%:*} name
            name=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$line")
            case $name in
                sjail/*) [ -e "lib/$name" ] || bad+="$line (no such library header)"$'\n' ;;
                */*) bad+="$line"$'\n' ;;
                *) [ -e "$(dirname "$file")/$name" ] || bad+="$line"$'\n' ;;
            esac
        done < <(quoted_includes "$fe/*")
    done
    [ -z "$bad" ] || fail "front-end includes outside the library and the front end's folder:"$'\n'"$bad"
}

# Every e2e file names the cluster it runs on (tests/e2e/helpers.bash): a file
# that did not would run on whatever settings the file before it left.
@test "every e2e file's setup_file asks for its cluster with use_cluster" {
    local f missing=""
    for f in tests/e2e/*.bats; do
        # From 'setup_file() {' (or its one-line form) to the line that ends it.
        awk '/^setup_file\(\)/ { on = 1 } on && /use_cluster/ { found = 1 } on && /}$/ { on = 0 }
             END { exit !found }' "$f" || missing+=" $f"
    done
    [ -z "$missing" ] || fail "no use_cluster in the setup_file of:$missing (tests/e2e/helpers.bash)"
}
