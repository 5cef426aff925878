# SPDX-License-Identifier: Apache-2.0
# Renders bench/results/latest.json as a Markdown report (jq -r -f).
def f($d): if . == null then "n/a" else (. * pow(10; $d) | round) / pow(10; $d) | tostring end;
def mp($m): "\(.[$m].median_us | f(1)) / \(.[$m].p99_us | f(1))";
def row: "| " + join(" | ") + " |";

"# slurm-jail benchmark results (\(.mode))",
"",
"Machine: \(.machine.cpu), \(.machine.cpus) CPUs (shared), \(.machine.memory_gib) GiB, \(.machine.os), kernel \(.machine.kernel), Slurm \(.machine.slurm); \(.machine.date); commit \(.machine.git_commit[0:12]); load at start \(.machine.load_average_at_start).",
"",
"## Targets",
"",
"| target | measured | limit | result |",
"|---|---|---|---|",
(.targets[] | ["\(.name): \(.what)", "\(.value | f(3)) \(.unit)", "\(.limit) \(.unit)", "**\(.result)**"] | row),
"",
"## Jail entry micro-benchmark (µs, median / p99, \(.micro.settings.samples) entry samples per row)",
"",
"entry = step prepare (acquire_node_namespace) + setns (enter_namespace) + task check; watched = entry samples whose step prepare joined through the node watch (node watch: \(.micro.node_watch // "n/a")) instead of the full check; floor = setns + task check alone, in a fresh child; stamp check = current_stamp alone (jail walk and every bind source resolved), the full check that a step makes when the watch is not armed, and that grows with the binds; build = node-namespace rebuild; fresh = a fresh namespace per task (the design the node namespace replaces).",
"",
"| host mounts | binds | entry | watched | step prepare | floor | stamp check | setns | task check | build | fresh |",
"|---|---|---|---|---|---|---|---|---|---|---|",
(.micro.configs[] | [(.host_mounts_actual | tostring), (.binds | tostring), mp("entry_total"),
  "\(.watched_entries // 0) / \(.entry_total.n)",
  mp("step_prepare"), (if .floor then mp("floor") else "n/a" end), mp("stamp_check"), mp("enter"),
  mp("task_check"), mp("build"), mp("fresh_namespace")] | row),
"",
"### Step entry with per-job namespaces (µs, median / p99)",
"",
"What chroot.so does per step now: job step = enter_job_for_step (node namespace fast path, the job's namespaces opened, setns into the job's stepd view); pid ns = start_children_in_job (the job's PID namespace for the fork window); task view = enter_tasks_view + cwd check in a task born in the job's PID namespace; entry = the three. job make / delete = a job's namespaces made (its first step) and deleted (job end).",
"",
"| host mounts | binds | entry | job step | pid ns | task view | job make | job delete |",
"|---|---|---|---|---|---|---|---|",
(.micro.configs[] | select(.job_entry_total != null)
  | [(.host_mounts_actual | tostring), (.binds | tostring), mp("job_entry_total"),
     mp("job_step"), mp("job_pid"), mp("job_task"), mp("job_make"), mp("job_delete")] | row),
"",
"### \(.micro.ratios[0].high_mounts) vs \(.micro.ratios[0].low_mounts) host mounts: ratio of medians (measured interleaved)",
"",
"| binds | entry | step prepare | stamp check | setns | task check | build | fresh | job entry | job make |",
"|---|---|---|---|---|---|---|---|---|---|",
(.micro.ratios | group_by(.binds)[] | (map({key: .metric, value: (.ratio | f(2))}) | from_entries) as $r
  | ["\(.[0].binds)", $r.entry_total, $r.step_prepare, $r.stamp_check, $r.enter, $r.task_check,
     $r.build, $r.fresh_namespace, ($r.job_entry_total // "n/a"), ($r.job_make // "n/a")] | row),
"",
(if .cluster == null or .cluster.launch == null then
   "## Step launch on the local cluster: not run (\(.cluster.skipped // "no results"))"
 else
   "## Step launch on the local cluster (ms; A = with chroot.so, B = without; A B A B)",
   "",
   "| command | pairs | A median | B median | A p99 | B p99 | median of per-pair ratios |",
   "|---|---|---|---|---|---|---|",
   (.cluster.launch[] | [.command, (.pairs | length | tostring), (.with_plugin.median_ms | f(1)),
     (.without_plugin.median_ms | f(1)), (.with_plugin.p99_ms | f(1)), (.without_plugin.p99_ms | f(1)),
     (.median_ratio | f(3))] | row),
   "",
   "## Memory and descriptors (\(.cluster.memory.jobs) jobs)",
   "",
   "| snapshot | slurmstepd RSS kB / fds / mounts | slurmd node1 RSS kB / fds / mounts | slurmd node2 RSS kB / fds / mounts |",
   "|---|---|---|---|",
   (.cluster.memory.snapshots[] | [.label + (if .plugin then "" else " (no plugin)" end),
     "\(.slurmstepd.rss_kb) / \(.slurmstepd.fds) / \(.slurmstepd.mounts)",
     "\(.slurmd_node1.rss_kb) / \(.slurmd_node1.fds) / \(.slurmd_node1.mounts)",
     "\(.slurmd_node2.rss_kb) / \(.slurmd_node2.fds) / \(.slurmd_node2.mounts)"] | row),
   (if .cluster.cleanup == null then empty else
     "",
     "## Job cleanup with the job container (\(.cluster.cleanup.jobs) jobs; \(.cluster.cleanup.setup))",
     "",
     "| snapshot | job state entries | host mounts | slurmd node1 fds / mounts / node processes | slurmd node2 fds / mounts / node processes |",
     "|---|---|---|---|---|",
     (.cluster.cleanup.snapshots[] | [.label, (.job_state_entries | tostring), (.host_mounts | tostring),
       "\(.slurmd_node1.fds) / \(.slurmd_node1.mounts) / \(.slurmd_node1.node_processes)",
       "\(.slurmd_node2.fds) / \(.slurmd_node2.mounts) / \(.slurmd_node2.node_processes)"] | row)
   end)
 end)
