#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns and in-container scripts
# The jail backup CronJob (jail.backup): off by default; when on, the
# populate-jail image runs slurm-jail-backup on the jail's PVC mounted
# read-only, with the password and the S3 credentials from Secrets. The
# rendered command line is handed to the real slurm-jail-backup, whose
# parser must take it.

load helpers

setup_file() {
    require_helm_tools "$root" kubernetes-models
    export R=$BATS_FILE_TMPDIR
    cat >"$R/on.yaml" <<'EOF'
jail:
  populate:
    preserve: [/opt/shared]
  backup:
    enabled: true
    repository: s3:https://s3.example.com/hpc-backups/jail
    passwordSecret: {name: jail-backup-password, key: restic}
    env: {existingSecret: jail-backup-s3}
    extraArgs: [--passes=5, --host=cluster-a]
    resources: {limits: {memory: 2Gi}}
EOF
    render_backup "$R/on.json" -f "$R/on.yaml"
}

# render_backup OUT [helm template args...]: the CronJob alone, validated.
render_backup() {
    local out=$1
    shift
    render_validated "$out" --show-only templates/jail/backup-cronjob.yaml "$@"
}

cronjob() { obj "$1" CronJob t-slurm-cluster-jail-backup; }

@test "jail backup: no CronJob by default" {
    "$helm_bin" template t "$chart" >"$BATS_TEST_TMPDIR/default.yaml"
    grep -q '^kind: StatefulSet$' "$BATS_TEST_TMPDIR/default.yaml"
    run grep -E '^kind: CronJob$|jail-backup' "$BATS_TEST_TMPDIR/default.yaml"
    assert_failure
}

@test "jail backup: slurm-jail-backup in the populate-jail image, nightly, Forbid, the jail read-only, the secrets as files and environment" {
    cj=$(cronjob "$R/on.json")
    jq -e '.spec.schedule == "17 3 * * *" and .spec.concurrencyPolicy == "Forbid"' <<<"$cj" >/dev/null
    spec=$(jq '.spec.jobTemplate.spec.template.spec' <<<"$cj")
    jq -e '.restartPolicy == "Never"' <<<"$spec" >/dev/null
    c=$(jq '.containers[0]' <<<"$spec")
    jq -e '.image == "slurm-jail/populate-jail:0.1.0-slurm24.11"' <<<"$c" >/dev/null
    jq -e '.command == ["/usr/local/bin/slurm-jail-backup"]' <<<"$c" >/dev/null
    jq -e '.args == ["backup", "--volume", "/mnt/jail", "--repo", "s3:https://s3.example.com/hpc-backups/jail",
        "--password-file", "/etc/slurm-jail-backup/password", "--preserve", "/opt/shared", "--passes=5", "--host=cluster-a"]' <<<"$c" >/dev/null ||
        fail "args: $(jq -c .args <<<"$c")"
    jq -e '.envFrom == [{"secretRef": {"name": "jail-backup-s3"}}]' <<<"$c" >/dev/null
    jq -e '.resources == {"limits": {"memory": "2Gi"}}' <<<"$c" >/dev/null
    # the jail's PVC, read-only both in the volume and in the mount
    jq -e '.volumes[] | select(.name == "jail") | .persistentVolumeClaim == {"claimName": "t-slurm-cluster-jail", "readOnly": true}' <<<"$spec" >/dev/null
    jq -e '.volumeMounts[] | select(.name == "jail") | .mountPath == "/mnt/jail" and .readOnly == true' <<<"$c" >/dev/null
    # the password Secret's key as the file --password-file names
    jq -e '.volumes[] | select(.name == "password") | .secret == {"secretName": "jail-backup-password", "defaultMode": 256, "items": [{"key": "restic", "path": "password"}]}' <<<"$spec" >/dev/null
    jq -e '.volumeMounts[] | select(.name == "password") | .mountPath == "/etc/slurm-jail-backup"' <<<"$c" >/dev/null
}

@test "jail backup: slurm-jail-backup takes the rendered command line" {
    c=$(cronjob "$R/on.json" | jq '.spec.jobTemplate.spec.template.spec.containers[0]')
    mapfile -t args < <(jq -r '.args[]' <<<"$c")
    [ "${args[2]}" = /mnt/jail ]
    args[2]=$BATS_TEST_TMPDIR/no-jail # never this machine's /mnt/jail
    run "$root/images/populate_jail/slurm-jail-backup" "${args[@]}"
    assert_failure 1 # not 2: every option was understood
    assert_output "slurm-jail-backup: error: volume '$BATS_TEST_TMPDIR/no-jail' is not a directory; pass the jail volume's mount point, e.g. --volume /mnt/jail"
}

@test "jail backup: jail.populate.image, else its own image; in a mixed cluster on amd64, with the amd64 jail" {
    render_backup "$BATS_TEST_TMPDIR/img.json" -f "$R/on.yaml" --set jail.populate.image=registry.example.com/populate:1
    cronjob "$BATS_TEST_TMPDIR/img.json" | jq -e '.spec.jobTemplate.spec.template.spec.containers[0].image == "registry.example.com/populate:1"' >/dev/null
    render_backup "$BATS_TEST_TMPDIR/mixed.json" -f "$chart/examples/mixed-arch.yaml" -f "$R/on.yaml" \
        --set jail.populate.image=registry.example.com/populate:1 --set jail.backup.image=registry.example.com/backup:2
    spec=$(cronjob "$BATS_TEST_TMPDIR/mixed.json" | jq '.spec.jobTemplate.spec.template.spec')
    jq -e '.nodeSelector == {"kubernetes.io/arch": "amd64"}' <<<"$spec" >/dev/null
    jq -e '.containers[0].image == "registry.example.com/backup:2"' <<<"$spec" >/dev/null
    jq -e '.volumes[] | select(.name == "jail") | .persistentVolumeClaim.claimName == "t-slurm-cluster-jail"' <<<"$spec" >/dev/null
}

@test "jail backup: refused without a repository or a password Secret, with a bad schedule or policy" {
    run "$helm_bin" template t "$chart" --set jail.backup.enabled=true --set jail.backup.passwordSecret.name=p
    assert_failure
    assert_output --partial 'jail.backup.enabled is true but jail.backup.repository is empty'
    run "$helm_bin" template t "$chart" --set jail.backup.enabled=true --set jail.backup.repository=/srv/backup
    assert_failure
    assert_output --partial 'jail.backup.passwordSecret.name is empty; name the Secret'
    run "$helm_bin" template t "$chart" -f "$R/on.yaml" --set-string jail.backup.schedule='every night' \
        --set jail.backup.concurrencyPolicy=Never
    assert_failure
    assert_output --partial "at '/jail/backup/schedule'"
    assert_output --partial "at '/jail/backup/concurrencyPolicy'"
}

@test "jail backup: a path repository on the volume repositoryVolume names, mounted at /var/lib/slurm-jail-backup" {
    render_backup "$BATS_TEST_TMPDIR/path.json" -f "$R/on.yaml" \
        --set jail.backup.repository=/var/lib/slurm-jail-backup/jail \
        --set jail.backup.repositoryVolume.persistentVolumeClaim.claimName=jail-backups
    spec=$(cronjob "$BATS_TEST_TMPDIR/path.json" | jq '.spec.jobTemplate.spec.template.spec')
    jq -e '.volumes[] | select(.name == "repository") == {"name": "repository", "persistentVolumeClaim": {"claimName": "jail-backups"}}' <<<"$spec" >/dev/null
    jq -e '.containers[0].volumeMounts[] | select(.name == "repository") | .mountPath == "/var/lib/slurm-jail-backup" and (has("readOnly") | not)' <<<"$spec" >/dev/null
    # Without it: no such volume (an S3 repository).
    spec=$(cronjob "$R/on.json" | jq '.spec.jobTemplate.spec.template.spec')
    jq -e '[.volumes[].name] | index("repository") == null' <<<"$spec" >/dev/null
    run "$helm_bin" template t "$chart" -f "$R/on.yaml" --set jail.backup.repositoryVolume.name=x
    assert_failure
    assert_output --partial "at '/jail/backup/repositoryVolume'"
}
