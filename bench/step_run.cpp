// SPDX-License-Identifier: Apache-2.0
// sjail-step-run: one job step the way chroot.so runs it, without Slurm. A
// "slurmstepd" child enters the job's view (making the job's namespaces
// from the node's jail namespace: enter_job_for_step), has its children
// born in the job (start_children_in_job) and forks the task, which enters
// the tasks' view (enter_tasks_view) and runs CMD with the jail as "/". The
// job is deleted afterwards (delete_job_namespace) unless --keep-job. Exits
// with the task's status (125: the step could not be entered, with the
// reason on stderr). For measuring work inside the jail against outside on
// a machine without Slurm (bench/gpu-check). Needs root.
#include "sjail/core/config.hpp"
#include "sjail/core/parse_config.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/sys/job/job_namespace.hpp"
#include "sjail/sys/job/step_entry.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

constexpr int kEntryFailed = 125;

[[noreturn]] void fail_entry(const std::string &what, const sjail::Status &s) {
    std::cerr << "sjail-step-run: " << what << ": " << s.message() << "\n";
    ::_exit(kEntryFailed);
}

int exit_code(int status) {
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : kEntryFailed;
}

// The task: in the tasks' view, then CMD.
[[noreturn]] void run_task(const sjail::StepJail &step, std::vector<std::string> &command) {
    if (auto s = sjail::enter_tasks_view(step, sjail::PidCheck::Required); !s.ok()) {
        fail_entry("entering the tasks' view", s);
    }
    std::vector<char *> argv;
    argv.reserve(command.size() + 1);
    for (auto &arg : command) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::cerr << "sjail-step-run: exec " << command[0] << ": " << std::strerror(errno) << "\n";
    ::_exit(127);
}

// The step: slurmstepd's part, in a child of its own; the task's status.
int run_step(const sjail::Config &config, std::uint32_t job, std::vector<std::string> &command) {
    const pid_t stepd = ::fork();
    if (stepd < 0) {
        return kEntryFailed;
    }
    if (stepd == 0) {
        sjail::StepJail step;
        if (auto s = sjail::enter_job_for_step(config, job, step); !s.ok()) {
            fail_entry("entering the job's view", s);
        }
        if (auto s = sjail::start_children_in_job(step); !s.ok()) {
            fail_entry("starting children in the job", s);
        }
        const pid_t task = ::fork();
        sjail::stop_children_in_job(step);
        if (task == 0) {
            run_task(step, command);
        }
        int status = 0;
        if (task < 0 || ::waitpid(task, &status, 0) != task) {
            ::_exit(kEntryFailed);
        }
        ::_exit(exit_code(status));
    }
    int status = 0;
    if (::waitpid(stepd, &status, 0) != stepd) {
        return kEntryFailed;
    }
    return exit_code(status);
}

int run(int argc, char **argv) {
    std::uint32_t job = 4000000000U;
    bool keep_job = false;
    std::string settings;
    std::vector<std::string> command;
    CLI::App app{"sjail-step-run: one job step as chroot.so runs it, without Slurm: CMD runs as "
                 "its task with the jail as /. Needs root."};
    app.add_option("--settings", settings,
                   "chroot.so's plugstack.conf settings, one string (\"jail=/mnt/jail "
                   "state=/run/sjail gpu=on\")")
        ->required();
    app.add_option("--job", job, "the job's id (its namespaces: STATE/jobs/ID)")
        ->capture_default_str();
    app.add_flag("--keep-job", keep_job, "leave the job's namespaces for the next step");
    app.add_option("command", command, "CMD [ARG...] (after --)")->required();
    CLI11_PARSE(app, argc, argv);
    const auto parsed = sjail::parse_config(sjail::words_of(settings));
    if (!parsed.status.ok()) {
        std::cerr << "sjail-step-run: --settings: " << parsed.status.message() << "\n";
        return 2;
    }
    const int code = run_step(parsed.config, job, command);
    if (!keep_job) {
        if (auto s = sjail::delete_job_namespace(parsed.config, job); !s.ok()) {
            std::cerr << "sjail-step-run: deleting job " << job << ": " << s.message() << "\n";
            return code == 0 ? 1 : code;
        }
    }
    return code;
}

} // namespace

int main(int argc, char **argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception &e) {
        std::cerr << "sjail-step-run: " << e.what() << "\n";
        return 2;
    }
}
