#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Slurm's own regression tests judge the jail: testsuite/python (pytest and
# its atf module, local-config mode) and testsuite/expect of Debian's source
# of the release under test (hack/slurm-testsuite-source), unmodified, run as
# the test user from the login host (whose / is the jail) against a cluster
# of six workers (setup_suite.bash). One Bats test per Slurm test: it passes
# when the Slurm test passes with the jail as it does without it, fails when
# it passes without the jail and not with it, and skips, with the reason,
# when it does not pass without the jail either (never counted as a pass).
#
# Without the jail: the recorded baseline-REL.txt of this folder (the default
# run), or a pass of this run (SLURM_JAIL_TESTSUITE_PASS=both; the default for
# a release without a baseline). Record a baseline again with
# SLURM_JAIL_TESTSUITE_PASS=baseline tests/run-all slurm-testsuite; another
# release: SLURM_JAIL_LOCAL_SLURM=24.11 (or 26.05) in front. Each test is
# named as 22.05 names it, then REL:NAME as release REL and later name it
# (24.11 renumbered testsuite/python: test_116_22.py is srun --chdir).
#
# What runs: every test of job launch that the local cluster can run, with
# the jail's own concerns first: srun's options, its I/O and file name
# patterns, --chdir, the environment, identity, umask and limits, exit codes,
# signals, task prolog and epilog, multi-prog, several steps and several
# srun at once, job arrays, stdin broadcast to four nodes (python); srun's
# open modes, binary I/O, output switched off, --overlap, concurrent steps in
# a batch job, SIGINT, salloc's identity, environment and node counts,
# sbatch's environment, sbcast (overwrite, times, its security checks,
# buffer sizes, a step's nodes), heterogeneous jobs (sbatch and salloc, their
# environment, sbcast to one component), no descriptor leaked into a task
# and no ignored signal in its mask (expect).
#
# What is left out, and why:
# - the client-only tests (--help, --usage, --version of every command):
#   nothing of them reaches a node; Debian's version string also fails
#   Slurm's own --version tests, with the jail and without it;
# - tests that need another configuration (local-config mode skips them):
#   accounting (sacct, sacctmgr, sreport, sprio, job accounting), auto-config
#   (node features, route plugins, --constraint with features), GPUs and MPS,
#   more nodes than six (128 for increasing job sizes, 9 for --test-only),
#   MpiDefault=pmi2 and an mpicc (test1.94, test1.88: MPI through PMI2 and
#   PMIx is e2e 23's), a lua job submit plugin, SPANK plugins of the tests'
#   own (they rewrite plugstack.conf);
# - srun --no-allocate with several jobs (94 s; the single job stays);
# - srun signal forwarding (test_signal_forwarding.py): it signals the job
#   right after sbatch, before its step can run, and so passes or fails by
#   chance, with the jail and without it (seen here both ways, under load);
#   e2e 04 shows signals reaching jailed tasks;
# - sbcast to a whole heterogeneous job (test38.11), which fails with the
#   jail: slurmd writes a component's copy into the view of the het job's
#   first job id, which that component's steps (their own job id) do not
#   see. chroot.so(8) LIMITATIONS; sbcast to one component (--jobid=J+N)
#   works;
# - scontrol reconfigure: it restarts no node and asks nothing of the jail;
# - 22.05's suite has no test of --get-user-env (e2e 10 and 32 cover it).

setup() {
    # shellcheck source=tests/slurm-testsuite/helpers.bash
    . "$BATS_TEST_DIRNAME/helpers.bash"
    load /usr/lib/bats/bats-support/load.bash
    load /usr/lib/bats/bats-assert/load.bash
}

@test "srun --chdir" { judge python commands/srun/test_--chdir.py::test_chdir 24.11:test_116_22.py::test_chdir; }
@test "srun --task-epilog" { judge python commands/srun/test_--task-epilog.py::test_task_epilog 24.11:test_116_37.py::test_task_epilog; }
@test "srun --task-prolog" { judge python commands/srun/test_--task-prolog.py::test_task_prolog 24.11:test_116_21.py::test_task_prolog; }
@test "srun --task-prolog and --task-epilog" {
    judge python commands/srun/test_task-prolog_and_epilog.py::test_task_prolog_and_epilog 24.11:test_116_44.py::test_task_prolog_and_epilog
}
@test "srun --input --output --error" {
    judge python commands/srun/test_--input--output--error.py::test_input_ouput_error 24.11:test_116_32.py::test_input_output_error
}
@test "srun --input --output per task id" {
    judge python commands/srun/test_--input--output_taskid.py::test_input_ouput_taskid 24.11:test_116_43.py::test_input_output_taskid
}
@test "srun --output --error file name patterns" {
    judge python commands/srun/test_--output--error_formatting.py::test_output_error_formatting 24.11:test_116_12.py::test_output_error_formatting
}
@test "srun --unbuffered" { judge python commands/srun/test_--unbuffered.py::test_unbuffered 24.11:test_116_34.py::test_unbuffered; }
@test "srun environment variables" { judge python commands/srun/test_env_variables.py::test_env_variables 24.11:test_116_40.py::test_env_variables; }
@test "srun user environment variables" {
    judge python commands/srun/test_env_variables.py::test_user_env_variables 24.11:test_116_40.py::test_user_env_variables
}
@test "srun Slurm-directed environment variables" {
    judge python commands/srun/test_env_variables.py::test_slurm_directed_env_variables 24.11:test_116_40.py::test_slurm_directed_env_variables
}
@test "srun --preserve-env" { judge python commands/srun/test_--preserve-env.py::test_preserve_env 24.11:test_116_14.py::test_preserve_env; }
@test "srun uid" { judge python commands/srun/test_identity.py::test_uid 24.11:test_116_47.py::test_uid; }
@test "srun gid" { judge python commands/srun/test_identity.py::test_gid 24.11:test_116_47.py::test_gid; }
@test "srun umask" {
    judge python commands/srun/test_propagation_of_umask_to_spawned_tasks.py::test_propagation_of_umask_to_spawned_tasks 24.11:test_116_8.py::test_propagation_of_umask_to_spawned_tasks
}
@test "srun user limits" { judge python commands/srun/test_srun_user_limits.py::test_user_limits 24.11:test_116_19.py::test_user_limits; }
@test "srun exit codes" { judge python commands/srun/test_exit_code_reporting.py::test_exit_code_reporting 24.11:test_116_30.py::test_exit_code_reporting; }
@test "srun --kill-on-bad-exit" { judge python commands/srun/test_--kill-on-bad-exit.py::test_kill_on_bad_exit 24.11:test_116_24.py::test_kill_on_bad_exit; }
@test "srun task signal abort message" {
    judge python commands/srun/test_task_signal_abort_message.py::test_task_signal_abort_message 24.11:test_116_4.py::test_task_signal_abort_message
}
@test "srun --quit-on-interrupt" { judge python commands/srun/test_--quit-on-interrupt.py::test_quit_on_interrupt 24.11:test_116_16.py::test_quit_on_interrupt; }
@test "srun --wait" { judge python commands/srun/test_--wait.py::test_wait 24.11:test_116_46.py::test_wait; }
@test "srun --multi-prog" { judge python commands/srun/test_--multi-prog.py::test_multi_prog 24.11:test_116_3.py::test_multi_prog; }
@test "srun inside srun" { judge python commands/srun/test_parallel_launch_srun.py::test_parallel_launch_srun 24.11:test_116_1.py::test_parallel_launch_srun; }
@test "srun --ntasks-per-node" { judge python commands/srun/test_--ntasks-per-node.py::test_ntasks_per_node 24.11:test_116_18.py::test_ntasks_per_node; }
@test "srun --overcommit" { judge python commands/srun/test_--overcommit.py::test_overcommit 24.11:test_116_9.py::test_overcommit; }
@test "srun --threads" { judge python commands/srun/test_--threads.py::test_threads 24.11:test_116_42.py::test_threads; }
@test "srun --hostfile" { judge python commands/srun/test_hostfile.py::test_hostfile 24.11:test_116_5.py::test_hostfile; }
@test "srun --mincpus" { judge python commands/srun/test_--mem--mincpus--tmp.py::Test_mem_mincpus_tmp::test_mincpus 24.11:test_116_28.py::Test_mem_mincpus_tmp::test_mincpus; }
@test "srun --mem" { judge python commands/srun/test_--mem--mincpus--tmp.py::Test_mem_mincpus_tmp::test_mem 24.11:test_116_28.py::Test_mem_mincpus_tmp::test_mem; }
@test "srun --tmp" { judge python commands/srun/test_--mem--mincpus--tmp.py::Test_mem_mincpus_tmp::test_tmp 24.11:test_116_28.py::Test_mem_mincpus_tmp::test_tmp; }
@test "srun --immediate" { judge python commands/srun/test_--immediate.py::test_immediate 24.11:test_116_11.py::test_immediate; }
@test "srun --job-name" { judge python commands/srun/test_--job-name.py::test_job_name 24.11:test_116_41.py::test_job_name; }
@test "srun --account" { judge python commands/srun/test_--account.py::test_account 24.11:test_116_2.py::test_account; }
@test "srun --slurmd-debug" { judge python commands/srun/test_--slurmd-debug.py::test_slurmdDebug 24.11:test_116_20.py::test_slurmdDebug; }
@test "srun -v" { judge python commands/srun/test_-v.py::test_v 24.11:test_116_17.py::test_v; }
@test "srun --no-allocate" { judge python commands/srun/test_--no-allocate.py::test_single_job 24.11:test_116_23.py::test_single_job; }
@test "srun into a job that does not exist" {
    judge python commands/srun/test_running_non-existent_job.py::test_running_non_existent_job 24.11:test_116_6.py::test_running_non_existent_job
}
@test "job arrays" { judge python features/job_arrays/test_basics.py::test_submit_and_cancel 24.11:test_122_1.py::test_submit_and_cancel; }
@test "stdin broadcast to four nodes" { judge python stress/test_stdin_broadcast.py::test_stdin_broadcast 24.11:test_138_1.py::test_stdin_broadcast; }

@test "srun --open-mode (test1.17)" { judge expect test1.17; }
@test "srun binary stdin and stdout (test1.70)" { judge expect test1.70; }
@test "srun --output and --error switched off (test1.20)" { judge expect test1.20; }
@test "srun --overlap (test1.12)" { judge expect test1.12; }
@test "batch job with concurrent steps (test1.35)" { judge expect test1.35; }
@test "srun and SIGINT (test1.38)" { judge expect test1.38; }
@test "no descriptor leaked into tasks (test7.9)" { judge expect test7.9; }
@test "no ignored signal in a task's mask (test7.15)" { judge expect test7.15; }
@test "salloc uid and gid (test15.4)" { judge expect test15.4; }
@test "salloc environment variables (test15.13)" { judge expect test15.13; }
@test "salloc node count (test15.19)" { judge expect test15.19; }
@test "sbatch environment variables (test17.13)" { judge expect test17.13; }
@test "sbcast --force (test14.4)" { judge expect test14.4; }
@test "sbcast --preserve (test14.5)" { judge expect test14.5; }
@test "sbcast security (test14.7)" { judge expect test14.7; }
@test "sbcast --size (test14.8)" { judge expect test14.8; }
@test "sbcast to a step's nodes (test14.10)" { judge expect test14.10; }
@test "heterogeneous sbatch options (test38.1)" { judge expect test38.1; }
@test "heterogeneous sbatch environment (test38.2)" { judge expect test38.2; }
@test "heterogeneous salloc options (test38.3)" { judge expect test38.3; }
@test "heterogeneous salloc environment (test38.4)" { judge expect test38.4; }
