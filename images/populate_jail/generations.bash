# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# populate-jail's volumes with generations (docs/jail-generations.md):
# building, migrating and rolling back generations, and telling which nodes
# hold one and deleting those none holds. Sourced by populate-jail, whose
# helpers (log, die, take_lock, exclude_rules, ...) and settings it uses.
# shellcheck disable=SC2154 # prog, state_name, dry_run, ...: populate-jail's

gens_dir() { echo "$target_dir/$state_name/generations"; }
live_file() { echo "$target_dir/$state_name/live"; }

# live_value KEY: the value of KEY= in the live file (first), or nothing.
live_value() {
    [ -f "$(live_file)" ] || return 0
    sed -n "s/^$1=//p" "$(live_file)" | head -1
}

# The data paths chroot.so binds into every generation: /home and each
# --preserve path. Their rules are chroot.so's (data= in the live file): a
# plain path of letters, digits and ._+-@/, no tree root code on the node
# reads (/etc, /usr, /bin, /sbin, /lib, /lib64) nor one below another.
check_data_paths() {
    local p q
    for p in "${preserve[@]}"; do
        case $p in
            *[!A-Za-z0-9._+@/-]*) die "--preserve '$p': a path of the users' data holds only letters, digits and ._+-@/" ;;
            /etc | /etc/* | /usr | /usr/* | /bin | /bin/* | /sbin | /sbin/* | /lib | /lib/* | /lib64 | /lib64/*)
                die "--preserve '$p': root on the nodes reads ${p#/} from the jail, so it cannot be users' data shared by every generation" ;;
        esac
        for q in "${preserve[@]}"; do
            if [ "$p" != "$q" ]; then
                case $p/ in "$q"/*) die "--preserve '$p' lies below '$q'; list each tree once" ;; esac
            fi
        done
    done
}

# The highest generation number on the volume, built or being built (0: none).
last_generation() {
    local entry n max=0
    for entry in "$(gens_dir)"/*; do
        n=${entry##*/}
        n=${n%.building}
        n=${n%.source}
        case $n in '' | *[!0-9]*) continue ;; esac
        [ "$n" -le "$max" ] || max=$n
    done
    echo "$max"
}

# built_from IDENTITY: the newest generation built from the source
# IDENTITY, or nothing.
built_from() {
    local n
    for ((n = $(last_generation); n > 0; n--)); do
        if [ -d "$(gens_dir)/$n" ] && [ "$(cat "$(gens_dir)/$n.source" 2>/dev/null)" = "$1" ]; then
            echo "$n"
            return 0
        fi
    done
}

# has_data_points N: generation N has a directory at each data path, for
# chroot.so to bind the users' data onto.
has_data_points() {
    local p
    for p in "${preserve[@]}"; do
        [ -d "$(gens_dir)/$1$p" ] && [ ! -L "$(gens_dir)/$1$p" ] || return 1
    done
}

# write_live N PREVIOUS: makes generation N live (PREVIOUS: what a rollback
# makes live again; may be empty) by renaming a new file over the live file.
write_live() {
    local n=$1 previous=$2 tmp p
    # Where the user databases go, checked before the switch.
    parents_root_only /etc/passwd
    tmp=$(live_file).tmp
    {
        echo "# slurm-jail: the live generation (written by populate-jail; do not edit)"
        echo "generation=$n"
        [ -z "$previous" ] || echo "previous=$previous"
        for p in "${preserve[@]}"; do echo "data=$p"; done
    } >"$tmp"
    chmod 0644 "$tmp"
    sync "$tmp"
    mv -f "$tmp" "$(live_file)"
    sync "$target_dir/$state_name"
    publish_user_databases "$n"
}

# publish_user_databases N: generation N's passwd, group and shadow copied to
# TARGET/etc, where the worker, login and controller images resolve the
# jail's users outside it (libnss-extrausers follows /var/lib/extrausers/*
# there; chroot.so never reads them). Each is a new file renamed into place.
publish_user_databases() {
    local n=$1 db src
    install -d -m 0755 "$target_dir/etc"
    for db in passwd group shadow; do
        src=$(gens_dir)/$n/etc/$db
        if [ ! -f "$src" ] || [ -L "$src" ]; then continue; fi
        rm -f "$target_dir/etc/.$db.new"
        cp -p "$src" "$target_dir/etc/.$db.new"
        mv -f "$target_dir/etc/.$db.new" "$target_dir/etc/$db"
    done
}

# The data paths named in the live file (a rollback keeps them).
live_data_paths() { sed -n 's/^data=//p' "$(live_file)"; }

# rsync that names a full volume as such. Its output goes to stdout.
rsync_into_volume() {
    local err status=0
    err=$(mktemp)
    rsync "$@" 2> >(tee "$err" >&2) || status=$?
    wait
    if [ "$status" -ne 0 ] && grep -q 'No space left on device' "$err"; then
        rm -f "$err"
        return 28
    fi
    rm -f "$err"
    return "$status"
}

# build_generation N BASE: generation N from the source, in N.building;
# files unchanged since BASE (the live generation, or a single-directory
# jail's top level) are hard links to BASE's, so they cost no space.
build_generation() {
    local n=$1 base=$2 build status=0 p
    build=$(gens_dir)/$n.building
    local -a excludes
    mapfile -t excludes < <(exclude_rules)
    install -d -m 0755 "$build"
    rsync_into_volume "${rsync_opts[@]}" --link-dest="$base" "${excludes[@]}" "$source_dir/" "$build/" || status=$?
    if [ "$status" -eq 28 ]; then
        rm -rf "$build"
        die "the volume $target_dir is full: building generation $n stopped with $(df -h --output=avail "$target_dir" | tail -1 | tr -d ' ') free after removing the part built. The live generation is unchanged. A build needs the size of the files that changed since the live generation, at most that of the source ($(du -sh "$source_dir" | cut -f1)); free space on the volume and run again"
    fi
    [ "$status" -eq 0 ] || die "copying $source_dir into $build failed (rsync exit $status); the live generation is unchanged, and the next run starts this build again"
    for p in "${preserve[@]}"; do
        if [ -L "$build$p" ] || { [ -e "$build$p" ] && [ ! -d "$build$p" ]; }; then
            die "the jail image has $p as something other than a directory; the users' data is bound there, so make it a directory in the image"
        fi
        install -d -m 0755 "$build$p"
    done
    chown root:root "$build"
    chmod 0755 "$build"
    [ -f "$build/$release_path" ] || die "generation $n has no /$release_path after the copy; the source changed while it was copied?"
}

# A data path neither on the volume nor in the source: an empty directory
# (root's, 0755; its owner and mode are then the admin's to choose), so that
# chroot.so has something to bind.
make_missing_data_paths() {
    local p
    for p in "${preserve[@]}"; do
        if ! exists "$target_dir$p"; then
            parents_root_only "$p"
            install -d -m 0755 "$target_dir$p"
            log "made the data path $p, empty (root's, 0755): give it the owner and mode its users need"
        fi
    done
}

generations_dry_run() {
    local live last base
    live=$(live_value generation)
    last=$(last_generation)
    if [ -n "$live" ] && [ "$(cat "$(gens_dir)/$live.source" 2>/dev/null)" = "$1" ]; then
        log "dry run: up to date: generation $live holds version $(release_version "$(gens_dir)/$live.source"); nothing would change"
        return 0
    fi
    if [ -n "$live" ]; then
        base=$(gens_dir)/$live
        log "dry run: upgrade: would build generation $((last + 1)) beside the live generation $live, then make it live"
    elif [ -d "$target_dir/$state_name" ]; then
        base=$target_dir
        log "dry run: migrate: the single-directory jail's files would become generation $((last + 1)) (unchanged files as hard links, no copy), the users' data staying where it is; then it is made live. Running jobs keep the single-directory view until they end"
    else
        base=$target_dir
        log "dry run: first population: would build generation 1, then make it live"
    fi
    log "dry run: changes against $base (rsync itemized; '*deleting' = not in the new generation):"
    local -a excludes
    mapfile -t excludes < <(exclude_rules)
    rsync "${rsync_opts[@]}" --delete --dry-run --itemize-changes "${excludes[@]}" "$source_dir/" "$base/"
    seed_preserved_paths
}

generations_main() {
    local identity=$1 state=$target_dir/$state_name live last n base start=$2
    check_data_paths
    check_line_usable
    if [ "$dry_run" -eq 1 ]; then
        generations_dry_run "$identity"
        return 0
    fi
    if [ ! -d "$state" ] && target_has_foreign_content; then
        die "target '$target_dir' is not empty and was not populated by $prog (no $state_name/); refusing to overwrite it. Point --target at an empty volume, or empty this one yourself"
    fi
    mkdir -p "$state"
    chmod 0700 "$state"
    take_lock
    install -d -m 0700 "$(gens_dir)"
    # A build a killed or failed run left: never live, started again.
    rm -rf "$(gens_dir)"/*.building
    local p
    for p in "${preserve[@]}"; do parents_root_only "$p"; done
    live=$(live_value generation)
    if [ -n "$live" ] && [ "$(cat "$(gens_dir)/$live.source" 2>/dev/null)" = "$identity" ]; then
        fix_root_ownership
        log "up to date: generation $live of $target_dir holds version $(release_version "$(gens_dir)/$live.source"); nothing to do (checked in $(elapsed_since "$start") s)"
        return 0
    fi
    n=$(built_from "$identity")
    if [ -n "$live" ] && [ -n "$n" ] && has_data_points "$n"; then
        # Built before (the version a rollback left): live again as it is.
        seed_preserved_paths
        make_missing_data_paths
        write_live "$n" "$live"
        log "generation $n of $target_dir already holds version $(release_version "$(gens_dir)/$n.source"): live again (the previous one, $live, is kept: --rollback makes it live again)"
        return 0
    fi
    last=$(last_generation)
    n=$((last + 1))
    if [ -n "$live" ]; then
        base=$(gens_dir)/$live
        log "upgrade: building generation $n beside the live generation $live"
    else
        # First population, or a single-directory jail migrated: its files
        # are the base, so unchanged ones become hard links.
        base=$target_dir
        if [ -e "$state/populated" ]; then
            log "migrate: the single-directory jail becomes generation $n; running jobs keep it until they end"
        else
            log "first population: building generation $n"
        fi
    fi
    build_generation "$n" "$base"
    seed_preserved_paths
    make_missing_data_paths
    fix_root_ownership
    check_new_generation "$n" "$live"
    mv -T "$(gens_dir)/$n.building" "$(gens_dir)/$n"
    printf '%s\n' "$identity" >"$(gens_dir)/$n.source"
    sync "$(gens_dir)"
    write_live "$n" "$live"
    log "done in $(elapsed_since "$start") s: generation $n of $target_dir is live, version $(release_version "$(gens_dir)/$n.source")${live:+ (the previous one, $live, is kept: --rollback makes it live again)}"
}

rollback_main() {
    local state=$target_dir/$state_name live previous p
    [ -d "$target_dir" ] || die "target '$target_dir' does not exist; pass the jail volume, e.g. --target /mnt/jail"
    target_dir=$(realpath -e "$target_dir")
    [ -f "$(live_file)" ] || die "$target_dir has no generations ($(live_file) is missing), so there is nothing to roll back to; a single-directory jail is upgraded in place"
    [ "$dry_run" -eq 1 ] || take_lock
    live=$(live_value generation)
    previous=$(live_value previous)
    [ -n "$previous" ] || die "$(live_file) names no previous generation (generation $live is the first); there is nothing to roll back to"
    [ -d "$(gens_dir)/$previous" ] || die "the previous generation $previous is missing from $(gens_dir); there is nothing to roll back to"
    if [ "$dry_run" -eq 1 ]; then
        log "dry run: rollback: would make generation $previous live again (generation $live becomes its previous)"
        return 0
    fi
    mapfile -t preserve < <(live_data_paths)
    write_live "$previous" "$live"
    log "rolled back: generation $previous of $target_dir is live again, version $(release_version "$(gens_dir)/$previous.source"); --rollback again makes generation $live live"
}


# ---- slurm-jail-check against a new generation (--check-line) ----

# --check-line: slurm-jail-check is installed and the line names jail=.
check_line_usable() {
    [ -n "$check_line" ] || return 0
    command -v slurm-jail-check >/dev/null ||
        die "--check-line needs slurm-jail-check, which is not installed here; install slurm-jail on this node, or drop --check-line"
    [[ " $check_line " == *" jail="* ]] ||
        usage_error "--check-line '$check_line': not a chroot.so line with jail=, e.g. 'required chroot.so jail=/mnt/jail'"
}

# with_jail DIR: --check-line with its jail= set to DIR.
with_jail() {
    local word out='' words
    read -ra words <<<"$check_line" # split on blanks, never globbed
    for word in "${words[@]}"; do
        [[ $word != jail=* ]] || word=jail=$1
        out+="${out:+ }$word"
    done
    echo "$out"
}

# check_problems DIR: what slurm-jail-check calls a problem with the jail at
# DIR, one a line, DIR written as JAIL (so two jails' lists compare).
check_problems() {
    local dir=$1 line
    slurm-jail-check --line "$(with_jail "$dir")" | sed -n 's/^PROBLEM: //p' |
        while IFS= read -r line; do echo "${line//"$dir"/JAIL}"; done | LC_ALL=C sort -u
}

# check_new_generation N LIVE: generation N (still N.building) has no problem
# that the live generation LIVE (none: a first population) does not have;
# else it is deleted and the run stops, the live generation unchanged.
check_new_generation() {
    local n=$1 live=$2 build added
    [ -n "$check_line" ] || return 0
    build=$(gens_dir)/$n.building
    added=$(LC_ALL=C comm -23 <(check_problems "$build") \
        <(if [ -n "$live" ]; then check_problems "$(gens_dir)/$live"; fi))
    if [ -n "$added" ]; then
        rm -rf "$build"
        die "slurm-jail-check finds in generation $n what the live generation ${live:-(none)} does not have, so it was not made live and is deleted (JAIL is the generation):
  ${added//$'\n'/$'\n'  }
Fix the jail image, then run again."
    fi
    log "checked generation $n with slurm-jail-check: no problem the live generation ${live:-(none)} does not have"
}

# ---- which nodes hold a generation; deleting those none holds ----

nodes_dir() { echo "$target_dir/$state_name/nodes"; }

# The generations on the volume, oldest first.
generation_numbers() {
    local entry
    for entry in "$(gens_dir)"/*; do
        if [ ! -d "$entry" ] || [ -L "$entry" ]; then continue; fi
        entry=${entry##*/}
        case $entry in '' | 0* | *[!0-9]*) continue ;; esac
        echo "$entry"
    done | sort -n
}

# holders_of N: each node whose record names generation N, with the time of
# its record ("NODE (recorded TIME)"), one a line.
holders_of() {
    local record
    for record in "$(nodes_dir)"/*; do
        if [ ! -f "$record" ] || [ -L "$record" ]; then continue; fi
        case ${record##*/} in .*) continue ;; esac
        if grep -qx "generation=$1" "$record"; then
            echo "${record##*/} (recorded $(date -d "@$(stat -c %Y "$record")" '+%F %T'))"
        fi
    done
}

# A volume with generations, named for the tools below (a resolved path).
require_generations() {
    [ -d "$target_dir" ] || die "target '$target_dir' does not exist; pass the jail volume, e.g. --target /mnt/jail"
    target_dir=$(realpath -e "$target_dir")
    [ -f "$(live_file)" ] || die "$target_dir has no generations ($(live_file) is missing); populate it with --generations first"
}

holders_main() {
    local live previous newest n role held
    require_generations
    live=$(live_value generation)
    previous=$(live_value previous)
    newest=$(generation_numbers | tail -1)
    for n in $(generation_numbers); do
        role=
        [ "$n" != "$live" ] || role=" live"
        [ "$n" != "$previous" ] || role=" previous"
        [ "$n" != "$newest" ] || [ -n "$role" ] || role=" newest"
        held=$(holders_of "$n" | paste -sd ',' | sed 's/,/, /g')
        echo "generation $n${role:+ (${role# })}: version $(release_version "$(gens_dir)/$n.source"); held by ${held:-no node}"
    done
    [ -d "$(nodes_dir)" ] || echo "(no node has recorded what it holds yet: chroot.so records it at a node's first step on a generation)"
}

prune_main() {
    local live previous newest n held freed=0 kept=0
    require_generations
    [ "$dry_run" -eq 1 ] || take_lock
    # A prune that was killed mid-way: finish it.
    [ "$dry_run" -eq 1 ] || rm -rf --one-file-system "$(gens_dir)"/*.deleting
    live=$(live_value generation)
    previous=$(live_value previous)
    newest=$(generation_numbers | tail -1)
    for n in $(generation_numbers); do
        # The newest is kept too, so that a number that was ever live is
        # never taken again.
        case $n in "$live" | "$previous" | "$newest") continue ;; esac
        held=$(holders_of "$n" | paste -sd ',' | sed 's/,/, /g')
        if [ -n "$held" ]; then
            log "kept generation $n: held by $held (a node lets go of it when its last job on it ends; populate-jail --forget-node NODE for a node that is gone)"
            kept=$((kept + 1))
            continue
        fi
        if [ "$dry_run" -eq 1 ]; then
            log "dry run: would delete generation $n (version $(release_version "$(gens_dir)/$n.source"), $(du -sh "$(gens_dir)/$n" | cut -f1) apparent)"
            continue
        fi
        # Renamed first: a killed prune leaves no generation half deleted.
        mv -T "$(gens_dir)/$n" "$(gens_dir)/$n.deleting"
        rm -rf --one-file-system "$(gens_dir)/$n.deleting" "$(gens_dir)/$n.source"
        log "deleted generation $n"
        freed=$((freed + 1))
    done
    [ "$dry_run" -eq 1 ] || log "pruned $target_dir: $freed generation(s) deleted, $kept kept because a node holds them; live $live${previous:+, previous $previous}"
}

forget_main() {
    case $forget_node in
        '' | .* | *[!A-Za-z0-9._-]*) usage_error "--forget-node '$forget_node': a node's record is named by its host name (letters, digits, '.', '_' and '-')" ;;
    esac
    require_generations
    take_lock
    [ -f "$(nodes_dir)/$forget_node" ] || die "no node named '$forget_node' has a record in $(nodes_dir); populate-jail --holders lists them"
    rm -f "$(nodes_dir)/$forget_node"
    log "forgot node $forget_node: the generations it held are no longer kept for it. Forget only a node that is gone: a running node writes its record again only when what it holds changes, and after a reboot"
}
