// SPDX-License-Identifier: Apache-2.0
// sjail-entry-bench: what the jail costs a step and a task, at any node size.
//
// For every host-mount count it forks one benchmark "node" (bench_env.hpp):
// a private mount namespace with that many mounts, a small jail and a
// prepared node namespace per admin-bind count. Samples are taken in rounds
// that visit every configuration in turn (rotating the order), so that the
// 50-vs-5000 ratios are measured side by side on the same, shared CPUs.
// Writes JSON (medians, p99, ratios, targets with PASS/MISS); never fails on
// a missed target. Needs root. See bench/README.md.
#include "bench_env.hpp"
#include "stats.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace {

using bench::Env;
using bench::Op;
using nlohmann::json;

// The metrics of one (host mounts, binds) configuration, in nanoseconds.
struct Samples {
    std::vector<std::int64_t> step_prepare; // acquire_node_namespace, fast path
    std::vector<std::int64_t> enter;        // unshare(CLONE_FS) + setns
    std::vector<std::int64_t> task_check;   // namespace inode + cwd check per task
    std::vector<std::int64_t> entry_total;  // the three above, one child each
    std::int64_t watched = 0;               // entry samples that joined through the node watch
    std::vector<std::int64_t> floor;        // setns + task check alone, in a fresh child
    std::vector<std::int64_t> stamp_check;  // current_stamp: jail walk + every bind source
    std::vector<std::int64_t> build;        // node namespace (re)build
    std::vector<std::int64_t> fresh;        // fresh namespace per task (old design)
    // Per-job namespaces (what chroot.so does now):
    std::vector<std::int64_t> job_step;   // enter_job_for_step: node + job views, setns
    std::vector<std::int64_t> job_pid;    // start_children_in_job: the job's PID namespace
    std::vector<std::int64_t> job_task;   // enter_tasks_view + cwd check, in the task
    std::vector<std::int64_t> job_entry;  // the three above
    std::vector<std::int64_t> job_make;   // a job's namespaces made (first step of a job)
    std::vector<std::int64_t> job_delete; // and deleted (job end)
};

struct Settings {
    std::vector<int> mounts = {50, 500, 5000};
    std::vector<int> binds = {5, 10, 20, 100};
    std::uint32_t samples = 2000;
    std::uint32_t build_samples = 60;
    std::uint32_t fresh_samples = 60;
    std::uint32_t job_make_samples = 60;
    std::uint32_t rounds = 20;
    std::string json_path;
};

// Splits `total` over `rounds` as evenly as possible; round r gets share(r).
std::uint32_t share(std::uint32_t total, std::uint32_t rounds, std::uint32_t r) {
    return total / rounds + (r < total % rounds ? 1U : 0U);
}

json summary_json(const std::vector<std::int64_t> &ns) {
    const bench::Summary s = bench::summarize(ns);
    return {{"n", s.n},           {"median_us", s.median_us},
            {"p99_us", s.p99_us}, {"mean_us", s.mean_us},
            {"min_us", s.min_us}, {"max_us", s.max_us}};
}

// One node per host-mount count; `actual_mounts` receives the mount-table
// size each reached.
std::string start_nodes(const Settings &set, std::vector<std::unique_ptr<Env>> &envs,
                        std::map<int, int> &actual_mounts, std::string &no_watch) {
    for (const int m : set.mounts) {
        std::cerr << "sjail-entry-bench: preparing a node with " << m << " host mounts\n";
        std::string error;
        auto env = Env::start(m, set.binds, error);
        if (!env) {
            return "node with " + std::to_string(m) + " host mounts: " + error;
        }
        actual_mounts[m] = env->actual_mounts();
        no_watch = env->no_watch();
        envs.push_back(std::move(env));
    }
    return "";
}

// Warm-up (not recorded): page in code and caches in every node.
std::string warm_up(const Settings &set, std::vector<std::unique_ptr<Env>> &envs) {
    for (auto &env : envs) {
        for (const int b : set.binds) {
            std::vector<std::int64_t> ignored;
            if (auto e = env->run(Op::Entry, b, 20, ignored); !e.empty()) {
                return "warm-up: " + e;
            }
            if (auto e = env->run(Op::JobEntry, b, 20, ignored); !e.empty()) {
                return "warm-up (job entry): " + e;
            }
        }
    }
    return "";
}

// "M mounts, B binds": one configuration, in messages.
std::string config_name(int m, int b) {
    return std::to_string(m) + " mounts, " + std::to_string(b) + " binds";
}

// A round's share of the entry samples of one configuration (`m` host
// mounts, `b` binds): the entries, the floor and the stamp check.
std::string sample_entries(Env &env, int m, int b, std::uint32_t count, Samples &s) {
    std::vector<std::int64_t> v;
    if (auto e = env.run(Op::Entry, b, count, v); !e.empty()) {
        return "entry (" + config_name(m, b) + "): " + e;
    }
    for (std::size_t j = 0; j + 3 < v.size(); j += 4) {
        s.step_prepare.push_back(v[j]);
        s.enter.push_back(v[j + 1]);
        s.task_check.push_back(v[j + 2]);
        s.entry_total.push_back(v[j] + v[j + 1] + v[j + 2]);
        s.watched += v[j + 3];
    }
    v.clear();
    if (auto e = env.run(Op::Floor, b, count, v); !e.empty()) {
        return "floor (" + config_name(m, b) + "): " + e;
    }
    for (std::size_t j = 0; j + 1 < v.size(); j += 2) {
        s.floor.push_back(v[j] + v[j + 1]);
    }
    if (auto e = env.run(Op::Stamp, b, count, s.stamp_check); !e.empty()) {
        return "stamp check (" + config_name(m, b) + "): " + e;
    }
    return "";
}

// A round's share of the per-job samples of one configuration: the step
// entries into a job, and jobs made and deleted.
std::string sample_jobs(Env &env, int m, int b, std::uint32_t count, std::uint32_t make_count,
                        Samples &s) {
    std::vector<std::int64_t> v;
    if (auto e = env.run(Op::JobEntry, b, count, v); !e.empty()) {
        return "job entry (" + config_name(m, b) + "): " + e;
    }
    for (std::size_t j = 0; j + 2 < v.size(); j += 3) {
        s.job_step.push_back(v[j]);
        s.job_pid.push_back(v[j + 1]);
        s.job_task.push_back(v[j + 2]);
        s.job_entry.push_back(v[j] + v[j + 1] + v[j + 2]);
    }
    v.clear();
    if (auto e = env.run(Op::JobMake, b, make_count, v); !e.empty()) {
        return "job make (" + std::to_string(m) + " mounts): " + e;
    }
    for (std::size_t j = 0; j + 1 < v.size(); j += 2) {
        s.job_make.push_back(v[j]);
        s.job_delete.push_back(v[j + 1]);
    }
    return "";
}

// Round r's samples of one configuration (`m` host mounts, `b` binds).
std::string sample_config(const Settings &set, std::uint32_t r, Env &env, int m, int b,
                          Samples &s) {
    if (auto e = sample_entries(env, m, b, share(set.samples, set.rounds, r), s); !e.empty()) {
        return e;
    }
    if (auto e = sample_jobs(env, m, b, share(set.samples, set.rounds, r),
                             share(set.job_make_samples, set.rounds, r), s);
        !e.empty()) {
        return e;
    }
    const std::string where = std::to_string(m) + " mounts";
    if (auto e = env.run(Op::Build, b, share(set.build_samples, set.rounds, r), s.build);
        !e.empty()) {
        return "build (" + where + "): " + e;
    }
    if (auto e = env.run(Op::Fresh, b, share(set.fresh_samples, set.rounds, r), s.fresh);
        !e.empty()) {
        return "fresh namespace (" + where + "): " + e;
    }
    return "";
}

std::string run_all(const Settings &set, std::map<std::pair<int, int>, Samples> &data,
                    std::map<int, int> &actual_mounts, std::string &no_watch) {
    std::vector<std::unique_ptr<Env>> envs;
    if (auto e = start_nodes(set, envs, actual_mounts, no_watch); !e.empty()) {
        return e;
    }
    if (auto e = warm_up(set, envs); !e.empty()) {
        return e;
    }
    const std::size_t nm = envs.size();
    for (std::uint32_t r = 0; r < set.rounds; ++r) {
        std::cerr << "sjail-entry-bench: round " << (r + 1) << "/" << set.rounds << "\n";
        for (std::size_t k = 0; k < nm; ++k) {
            const std::size_t i = (k + r) % nm; // rotate which node goes first
            const int m = set.mounts[i];
            for (const int b : set.binds) {
                if (auto e = sample_config(set, r, *envs[i], m, b, data[{m, b}]); !e.empty()) {
                    return e;
                }
            }
        }
    }
    return "";
}

json target(const std::string &name, const std::string &what, double value, double limit,
            const std::string &unit) {
    return {{"name", name},   {"what", what}, {"value", value},
            {"limit", limit}, {"unit", unit}, {"result", value <= limit ? "PASS" : "MISS"}};
}

void add_options(CLI::App &app, Settings &set, bool &quick) {
    app.add_option("--mounts", set.mounts, "host mount-table sizes")->capture_default_str();
    app.add_option("--binds", set.binds, "admin bind counts")->capture_default_str();
    app.add_option("--samples", set.samples, "entry and stamp-check samples per configuration")
        ->capture_default_str();
    app.add_option("--build-samples", set.build_samples, "node-namespace builds per configuration")
        ->capture_default_str();
    app.add_option("--fresh-samples", set.fresh_samples,
                   "fresh-namespace-per-task samples per configuration")
        ->capture_default_str();
    app.add_option("--job-make-samples", set.job_make_samples,
                   "job namespace make+delete samples per configuration")
        ->capture_default_str();
    app.add_option("--rounds", set.rounds, "interleaving rounds")->capture_default_str();
    app.add_flag("--quick", quick, "CI smoke: 60 entry samples, 6 builds, 3 rounds");
    app.add_option("--json", set.json_path, "write results here (default: stdout)");
}

// Every configuration's summaries.
json configs_json(const std::map<std::pair<int, int>, Samples> &data, std::map<int, int> &actual) {
    json configs = json::array();
    for (const auto &[key, s] : data) {
        configs.push_back({{"host_mounts", key.first},
                           {"host_mounts_actual", actual[key.first]},
                           {"binds", key.second},
                           {"entry_total", summary_json(s.entry_total)},
                           {"watched_entries", s.watched},
                           {"floor", summary_json(s.floor)},
                           {"step_prepare", summary_json(s.step_prepare)},
                           {"enter", summary_json(s.enter)},
                           {"task_check", summary_json(s.task_check)},
                           {"stamp_check", summary_json(s.stamp_check)},
                           {"build", summary_json(s.build)},
                           {"fresh_namespace", summary_json(s.fresh)},
                           {"job_entry_total", summary_json(s.job_entry)},
                           {"job_step", summary_json(s.job_step)},
                           {"job_pid", summary_json(s.job_pid)},
                           {"job_task", summary_json(s.job_task)},
                           {"job_make", summary_json(s.job_make)},
                           {"job_delete", summary_json(s.job_delete)}});
    }
    return configs;
}

// Ratios of the largest to the smallest host-mount count, per bind count.
json ratios_json(const Settings &set, const json &configs) {
    json ratios = json::array();
    const int lo = *std::min_element(set.mounts.begin(), set.mounts.end());
    const int hi = *std::max_element(set.mounts.begin(), set.mounts.end());
    for (const int b : set.binds) {
        for (const std::string metric :
             {"entry_total", "step_prepare", "enter", "task_check", "floor", "stamp_check", "build",
              "fresh_namespace", "job_entry_total", "job_step", "job_pid", "job_task", "job_make",
              "job_delete"}) {
            double mlo = 0;
            double mhi = 0;
            for (const auto &c : configs) {
                if (c["binds"] == b && c["host_mounts"] == lo) {
                    mlo = c[metric]["median_us"];
                }
                if (c["binds"] == b && c["host_mounts"] == hi) {
                    mhi = c[metric]["median_us"];
                }
            }
            ratios.push_back({{"binds", b},
                              {"metric", metric},
                              {"low_mounts", lo},
                              {"high_mounts", hi},
                              {"median_low_us", mlo},
                              {"median_high_us", mhi},
                              {"ratio", mlo > 0 ? mhi / mlo : 0.0}});
        }
    }
    return ratios;
}

// The targets, at 10 binds, 50 against 5000 host mounts.
json targets_json(const std::map<std::pair<int, int>, Samples> &data) {
    json targets = json::array();
    const auto median_of = [&data](int m, int b, std::vector<std::int64_t> Samples::*field) {
        const auto it = data.find({m, b});
        return it == data.end() ? -1.0 : bench::summarize(it->second.*field).median_us;
    };
    if (data.count({50, 10}) != 0 && data.count({5000, 10}) != 0) {
        const double e50 = median_of(50, 10, &Samples::entry_total);
        const double e5k = median_of(5000, 10, &Samples::entry_total);
        const double p50 = median_of(50, 10, &Samples::step_prepare);
        const double p5k = median_of(5000, 10, &Samples::step_prepare);
        targets.push_back(target("entry_median_50",
                                 "median jail entry (acquire + setns + task check), 50 "
                                 "host mounts, 10 binds",
                                 e50, 100, "us"));
        const double floor50 =
            median_of(50, 10, &Samples::enter) + median_of(50, 10, &Samples::task_check);
        targets.push_back(target("entry_floor_ratio_50",
                                 "median jail entry over the floor (median setns + median "
                                 "task check, same run), 50 host mounts, 10 binds",
                                 floor50 > 0 ? e50 / floor50 : 0, 3, "x"));
        targets.push_back(target("entry_median_5000",
                                 "median jail entry, 5000 host mounts, 10 binds", e5k, 100, "us"));
        targets.push_back(target("entry_ratio_5000_50",
                                 "median jail entry, 5000 vs 50 host mounts (10 binds)",
                                 e50 > 0 ? e5k / e50 : 0, 1.5, "x"));
        if (data.count({50, 5}) != 0 && data.count({50, 100}) != 0) {
            const double b5 = median_of(50, 5, &Samples::entry_total);
            const double b100 = median_of(50, 100, &Samples::entry_total);
            targets.push_back(target("entry_binds_ratio_100_5",
                                     "median jail entry, 100 vs 5 binds (50 host mounts)",
                                     b5 > 0 ? b100 / b5 : 0, 1.2, "x"));
        }
        targets.push_back(target("step_cost_ratio_5000_50",
                                 "median per-step cost (acquire), 5000 vs 50 "
                                 "host mounts (10 binds)",
                                 p50 > 0 ? p5k / p50 : 0, 1.5, "x"));
        const double j50 = median_of(50, 10, &Samples::job_entry);
        const double j5k = median_of(5000, 10, &Samples::job_entry);
        targets.push_back(target("job_entry_median_50",
                                 "median step entry with per-job namespaces "
                                 "(enter_job_for_step + the job's PID namespace + "
                                 "task's view), 50 host mounts, 10 binds",
                                 j50, 100, "us"));
        targets.push_back(target("job_entry_median_5000",
                                 "median step entry with per-job namespaces, 5000 host "
                                 "mounts, 10 binds",
                                 j5k, 100, "us"));
        targets.push_back(target("job_entry_ratio_5000_50",
                                 "median step entry with per-job namespaces, 5000 vs 50 "
                                 "host mounts (10 binds)",
                                 j50 > 0 ? j5k / j50 : 0, 1.5, "x"));
    }
    return targets;
}

// The results on stdout, or in the file `--json` named.
int write_results(const std::string &text, const Settings &set) {
    if (set.json_path.empty()) {
        std::cout << text;
    } else {
        std::ofstream f(set.json_path);
        f << text;
        if (!f) {
            std::cerr << "sjail-entry-bench: cannot write " << set.json_path << "\n";
            return 1;
        }
    }
    return 0;
}

int run(int argc, char **argv) {
    Settings set;
    bool quick = false;
    CLI::App app{"sjail-entry-bench: jail entry, per-step cost and node-namespace build of "
                 "chroot.so at several host-mount and admin-bind counts (needs root)"};
    add_options(app, set, quick);
    CLI11_PARSE(app, argc, argv);
    if (quick) {
        set.samples = 60;
        set.build_samples = 6;
        set.fresh_samples = 6;
        set.job_make_samples = 6;
        set.rounds = 3;
    }
    if (set.mounts.empty() || set.binds.empty() || set.rounds == 0 || set.samples < set.rounds) {
        std::cerr << "sjail-entry-bench: need mounts, binds, rounds >= 1 and samples >= rounds\n";
        return 2;
    }
    if (::geteuid() != 0) {
        std::cerr << "sjail-entry-bench: run as root (it makes mount namespaces and mounts)\n";
        return 2;
    }

    std::map<std::pair<int, int>, Samples> data;
    std::map<int, int> actual;
    std::string no_watch;
    if (auto e = run_all(set, data, actual, no_watch); !e.empty()) {
        std::cerr << "sjail-entry-bench: " << e << "\n";
        return 1;
    }

    json out;
    out["settings"] = {{"mounts", set.mounts},
                       {"binds", set.binds},
                       {"samples", set.samples},
                       {"build_samples", set.build_samples},
                       {"fresh_samples", set.fresh_samples},
                       {"job_make_samples", set.job_make_samples},
                       {"rounds", set.rounds},
                       {"quick", quick}};
    out["node_watch"] = no_watch.empty() ? std::string("on") : "off: " + no_watch;
    out["configs"] = configs_json(data, actual);
    out["ratios"] = ratios_json(set, out["configs"]);
    out["targets"] = targets_json(data);
    return write_results(out.dump(2) + "\n", set);
}

} // namespace

int main(int argc, char **argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception &e) {
        std::cerr << "sjail-entry-bench: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "sjail-entry-bench: unknown error\n";
    }
    return 1;
}
