#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # variables come from helpers.bash
# The GPU-less example values (examples/cpu-only.yaml: two partitions, node
# features, cgroup confinement, privileged workers, NodePort login) run by
# hack/kube-run. Overrides, because this is one small host: the images from
# local storage (image.registry=localhost), and node sizes left to slurmd
# (the example's 32 CPUs and 60000 MiB are a c6i.8xlarge's).

load helpers

setup_file() {
    require_helm_tools "$root" yaml
    build_images
    make_user_keys
    release_start -f "$chart/examples/cpu-only.yaml" -f "$BATS_FILE_TMPDIR/keys.yaml" \
        --set image.registry=localhost --set nodesets.cpu.cpus=0 --set nodesets.cpu.realMemory=0
    make_known_hosts "$BATS_FILE_TMPDIR/install.yaml"
    wait_for_nodes 8 # 4 nodes, each in two partitions
}

teardown() { dump_release; }

teardown_file() { release_stop; }

@test "cpu-only example: four workers in both partitions, with the example's features" {
    run ctl sinfo -h -o '%P %D %f %T'
    assert_line 'main* 4 nodeset-cpu,avx512,epyc idle'
    assert_line 'debug 4 nodeset-cpu,avx512,epyc idle'
    run ctl scontrol show config
    assert_line --regexp '^ProctrackType += proctrack/cgroup$'
    assert_line --regexp '^ClusterName += cpu_cluster$'
}

@test "cpu-only example: ssh in, sbatch --wait to the debug partition by feature, read the output back" {
    run as_testuser "sbatch --parsable --wait -p debug -C avx512 -N2 -o 'cpu-%j.out' --wrap 'srun -l hostname | sort'"
    assert_success
    local job=${lines[-1]}
    run as_testuser "cat cpu-$job.out"
    assert_line --regexp '^0: t-slurm-cluster-cpu-[0-3]$'
    assert_line --regexp '^1: t-slurm-cluster-cpu-[0-3]$'
}

@test "cpu-only example: cgroup confinement: a task over its --mem is killed, one within it runs" {
    run as_testuser "srun -p debug --mem=64 python3 -c 'b = bytearray(300 * 1024 * 1024); print(\"allocated\")'"
    assert_failure
    assert_output --partial 'Out Of Memory'
    refute_output --partial allocated
    run as_testuser "srun -p debug --mem=400 python3 -c 'b = bytearray(300 * 1024 * 1024); print(\"allocated\")'"
    assert_success
    assert_output allocated
}

@test "cpu-only example: the helm test hook passes; the Service type kube-run cannot give is listed" {
    run kr test
    assert_success
    assert_line 'Phase: Succeeded'
    run kr unsupported -f "$BATS_FILE_TMPDIR/install.yaml"
    assert_line --partial 'Service/t-slurm-cluster-login: spec.type="NodePort": type NodePort: reachable only from inside the cluster network'
    assert_line --partial 'Service/t-slurm-cluster-login: spec.ports[0].nodePort=30022: no node ports'
    assert_line --partial 'StatefulSet/t-slurm-cluster-cpu: spec.template.spec.nodeSelector='
}
