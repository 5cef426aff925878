# SPDX-License-Identifier: Apache-2.0
# Turns bench/cluster-bench's raw lines into its JSON result.
# Inputs: $t (timing pairs {bench,a,b} in seconds), $s (snapshots),
# $cl (the job-container cluster before and after $jobs jobs),
# $quick, $jobs, $plugstack.
def median: sort | length as $n
  | if $n == 0 then null
    elif $n % 2 == 1 then .[($n - 1) / 2]
    else (.[$n / 2 - 1] + .[$n / 2]) / 2 end;
# Nearest rank: the smallest value with at least 99% of the values at or below it.
def p99: sort | length as $n
  | if $n == 0 then null else .[((0.99 * $n) | ceil) - 1] end;
def ms: map(. * 1000);
def summary: {n: length, median_ms: (ms | median), p99_ms: (ms | p99),
              mean_ms: (if length > 0 then (ms | add / length) else null end),
              min_ms: (ms | min), max_ms: (ms | max)};
def target($name; $what; $value; $limit; $unit):
  {name: $name, what: $what, value: $value, limit: $limit, unit: $unit,
   result: (if $value == null then "NOT MEASURED"
            elif $value <= $limit then "PASS" else "MISS" end)};

def launch($name; $command):
  [$t[] | select(.bench == $name)] as $p
  | {name: $name, command: $command,
     pairs: ($p | map({a_s: .a, b_s: .b, ratio: (.a / .b)})),
     with_plugin: ($p | map(.a) | summary),
     without_plugin: ($p | map(.b) | summary),
     median_ratio: ($p | map(.a / .b) | median),
     p99_ratio: ($p | map(.a / .b) | p99)};


($s[0]) as $early | ($s[1]) as $late | ($s[2]) as $c0 | ($s[3]) as $c1
| [launch("srun1"; "srun -n1 true"),
   launch("wide"; "srun -N2 -n64 --overcommit true"),
   launch("sbatch"; "sbatch --wrap true, until complete"),
   launch("srun1_jc"; "srun -n1 true, job container + chroot.so vs no plugin"),
   launch("wide_jc"; "srun -N2 -n64 --overcommit true, job container + chroot.so vs no plugin")]
  as $launch
| ($cl[0]) as $before | ($cl[1]) as $after
| ($sc[0]) as $spank_before | ($sc[1]) as $spank_after
| {
    quick: $quick,
    plugstack_with: $plugstack,
    plugstack_without: "# cluster-bench: chroot.so off",
    order: "A B A B: each pair runs the command with chroot.so (A), then without (B); ratio = A / B",
    launch: $launch,
    memory: {jobs: $jobs, snapshots: $s,
      slurmd_rss_growth_kb: ([$late.slurmd_node1.rss_kb - $early.slurmd_node1.rss_kb,
                              $late.slurmd_node2.rss_kb - $early.slurmd_node2.rss_kb]),
      slurmd_rss_growth_control_kb: ([$c1.slurmd_node1.rss_kb - $c0.slurmd_node1.rss_kb,
                                      $c1.slurmd_node2.rss_kb - $c0.slurmd_node2.rss_kb]),
      slurmd_fd_growth: ([$late.slurmd_node1.fds - $early.slurmd_node1.fds,
                          $late.slurmd_node2.fds - $early.slurmd_node2.fds]),
      slurmd_mount_growth: ([$late.slurmd_node1.mounts - $early.slurmd_node1.mounts,
                             $late.slurmd_node2.mounts - $early.slurmd_node2.mounts]),
      slurmstepd_rss_growth_kb: ($late.slurmstepd.rss_kb - $early.slurmstepd.rss_kb),
      slurmstepd_fd_growth: ($late.slurmstepd.fds - $early.slurmstepd.fds)},
    spank_cleanup: {jobs: (2 * $jobs), setup: "chroot.so alone, PrologFlags=Contain, plugstack.conf switched on and off between jobs",
      snapshots: $sc,
      job_state_entries_after: $spank_after.job_state_entries,
      node_mount_growth: ([$spank_after.slurmd_node1.mounts - $spank_before.slurmd_node1.mounts,
                           $spank_after.slurmd_node2.mounts - $spank_before.slurmd_node2.mounts]),
      node_process_growth: ([$spank_after.slurmd_node1.node_processes - $spank_before.slurmd_node1.node_processes,
                             $spank_after.slurmd_node2.node_processes - $spank_before.slurmd_node2.node_processes])},
    cleanup: {jobs: $jobs, setup: "JobContainerType=job_container/slurm_jail, PrologFlags=Contain",
      snapshots: $cl,
      job_state_entries_after: $after.job_state_entries,
      node_mount_growth: ([$after.slurmd_node1.mounts - $before.slurmd_node1.mounts,
                           $after.slurmd_node2.mounts - $before.slurmd_node2.mounts]),
      host_mount_growth: ($after.host_mounts - $before.host_mounts),
      node_process_growth: ([$after.slurmd_node1.node_processes - $before.slurmd_node1.node_processes,
                             $after.slurmd_node2.node_processes - $before.slurmd_node2.node_processes]),
      slurmd_fd_growth: ([$after.slurmd_node1.fds - $before.slurmd_node1.fds,
                          $after.slurmd_node2.fds - $before.slurmd_node2.fds])}
  }
| .targets = [
    target("srun1_ratio"; "median ratio per pair, srun -n1 true, with / without chroot.so";
           $launch[0].median_ratio; 1.05; "x"),
    target("wide_ratio"; "median ratio per pair, srun -N2 -n64 --overcommit true";
           $launch[1].median_ratio; 1.10; "x"),
    target("srun1_jc_ratio"; "median ratio per pair, srun -n1 true, job container + chroot.so / no plugin";
           $launch[3].median_ratio; 1.05; "x"),
    target("wide_jc_ratio"; "median ratio per pair, 64-task step, job container + chroot.so / no plugin";
           $launch[4].median_ratio; 1.10; "x"),
    target("slurmd_fd_growth"; "slurmd open fds, after \($jobs) jailed jobs minus after 10 (worst node)";
           (.memory.slurmd_fd_growth | max); 0; "fds"),
    target("slurmd_rss_growth_attributable";
           "slurmd RSS growth over \($jobs - 10) jailed jobs minus growth over as many unjailed jobs (worst node)";
           ([.memory.slurmd_rss_growth_kb, .memory.slurmd_rss_growth_control_kb] | transpose
            | map(.[0] - .[1]) | max); 1024; "kB"),
    target("slurmd_mount_growth"; "mounts in slurmd's namespace, after \($jobs) jailed jobs minus after 10";
           (.memory.slurmd_mount_growth | max); 0; "mounts"),
    target("slurmstepd_fd_growth"; "fds of a jailed step's slurmstepd, job \($jobs) vs job 10";
           .memory.slurmstepd_fd_growth; 0; "fds"),
    target("slurmstepd_rss_growth"; "RSS of a jailed step's slurmstepd, job \($jobs) vs job 10";
           .memory.slurmstepd_rss_growth_kb; 1024; "kB"),
    target("spank_job_state_left"; "job state entries (STATE/jobs/*) left on the nodes after the memory runs (jobs with chroot.so switched off between their steps and their epilog included), chroot.so alone";
           .spank_cleanup.job_state_entries_after; 0; "entries"),
    target("spank_process_growth"; "processes on the nodes (job inits included), after the memory runs minus before (worst node), chroot.so alone";
           (.spank_cleanup.node_process_growth | max); 0; "processes"),
    target("spank_mount_growth"; "mounts in slurmd's namespace, after the memory runs minus before (worst node), chroot.so alone";
           (.spank_cleanup.node_mount_growth | max); 0; "mounts"),
    target("jc_job_state_left"; "job state entries (STATE/jobs/*) left on the nodes after \($jobs) jobs, job container";
           .cleanup.job_state_entries_after; 0; "entries"),
    target("jc_mount_growth"; "mounts in the nodes' and the host's tables, after \($jobs) jobs minus before (worst), job container";
           ([.cleanup.node_mount_growth[], .cleanup.host_mount_growth] | max); 0; "mounts"),
    target("jc_process_growth"; "processes on the nodes, after \($jobs) jobs minus before (worst node), job container";
           (.cleanup.node_process_growth | max); 0; "processes"),
    target("jc_slurmd_fd_growth"; "slurmd open fds, after \($jobs) jobs minus before (worst node), job container";
           (.cleanup.slurmd_fd_growth | max); 0; "fds")
  ]
