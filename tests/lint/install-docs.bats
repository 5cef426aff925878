#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The README's "Install on your nodes" and chroot.so(8) in step: every line
# the man page requires of a node (the plugstack.conf line, the slurm.conf
# lines, su's PAM line and its files, the capabilities) is in the README's
# install section, and the section's steps come in the order admins do them.

setup() {
    load /usr/lib/bats/bats-support/load.bash
    load /usr/lib/bats/bats-assert/load.bash
    cd "$SLURM_JAIL_ROOT" || return 1
    PAGE=plugin/chroot/man/chroot.so.8
}

# man_section NAME: the text of chroot.so(8)'s section NAME, without its heading.
man_section() {
    awk -v want=".SH $1" '$0 == want { on = 1; next } /^\.SH / { on = 0 } on' "$PAGE"
}

# install_section: the README's "Install on your nodes", heading to next heading.
install_section() {
    awk '/^## Install on your nodes$/ { on = 1; next } /^## / { on = 0 } on' README.md
}

# squeeze: runs of blanks made one space, roff's "\-" made "-".
squeeze() { sed -e 's/\\-/-/g' -e 's/[[:space:]]\{1,\}/ /g'; }

# required_lines: what chroot.so(8) asks of a node, one item per line.
required_lines() {
    # SYNOPSIS: the plugstack.conf line, up to its first placeholder.
    man_section SYNOPSIS | grep -m1 '^required chroot\.so ' | sed 's/\\f.*//'
    # SLURM.CONF: the lines of its .nf block, without their comments.
    man_section SLURM.CONF | awk '/^\.nf/ { on = 1; next } /^\.fi/ { exit } on' |
        sed -e 's/[[:space:]]*#.*//'
    # NODE REQUIREMENTS: the PAM line in bold, the files named in italics,
    # the capabilities.
    man_section 'NODE REQUIREMENTS' | sed -n 's/^\.B \(session .*\)/\1/p'
    man_section 'NODE REQUIREMENTS' | sed -n 's/^\.I \(\/etc\/pam\.d\/.*\)/\1/p'
    man_section 'NODE REQUIREMENTS' | grep -oE 'CAP_[A-Z_]+'
}

@test "chroot.so(8) names the lines the check reads (the page's layout is as expected)" {
    run bash -c "$(declare -f man_section required_lines squeeze); PAGE=$PAGE; required_lines | squeeze"
    assert_success
    assert_line 'required chroot.so jail='
    assert_line 'JobContainerType=job_container/slurm_jail'
    assert_line 'NamespaceType=namespace/slurm_jail'
    assert_line 'PrologFlags=Contain'
    assert_line 'session required pam_slurm_jail.so node=compute no_job=private'
    assert_line '/etc/pam.d/su'
    assert_line '/etc/pam.d/su-l'
    assert_line 'CAP_SYS_ADMIN'
}

@test "the README's install section has every line chroot.so(8) requires of a node" {
    local section item missing=""
    section=$(install_section | squeeze)
    [ -n "$section" ] || fail "README.md has no '## Install on your nodes' section"
    while IFS= read -r item; do
        [ -n "$item" ] || continue
        grep -qF -- "$item" <<<"$section" || missing+=$'\n'"  $item"
    done < <(required_lines | squeeze)
    [ -z "$missing" ] || fail "README.md's 'Install on your nodes' lacks what chroot.so(8) requires:$missing"
}

@test "the README's install steps come in order: package, plugstack.conf, slurm.conf, su, mount points, slurm-jail-check" {
    local step last=0 at
    # shellcheck disable=SC2016 # the backquotes are Markdown, not expansions
    for step in '**The package.**' '**`plugstack.conf`**' '**`slurm.conf`**' '**su enters the jail**' \
        "**The jail's mount points.**" '**Check the node and the jail**'; do
        at=$(install_section | grep -nF -m1 -- "$step" | cut -d: -f1)
        [ -n "$at" ] || fail "README.md's install section has no step $step"
        [ "$at" -gt "$last" ] || fail "README.md's install step $step comes before the one above it"
        last=$at
    done
}

@test "the README's install section comes before the developer material" {
    local install what
    install=$(grep -n -m1 '^## Install on your nodes$' README.md | cut -d: -f1)
    what=$(grep -n -m1 '^## What is in here$' README.md | cut -d: -f1)
    [ -n "$install" ] && [ -n "$what" ] && [ "$install" -lt "$what" ]
}
