// SPDX-License-Identifier: Apache-2.0
// slurm-jail-check: checks a node and its jail against the chroot.so line
// of plugstack.conf and lists every problem at once, each with its fix.
// See man/slurm-jail-check.8.
#include "finding.hpp"
#include "inspect.hpp"
#include "plugstack.hpp"
#include "sjail/core/config.hpp"
#include "slurm_conf.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <glob.h>
#include <iostream>
#include <sstream>

namespace {

using sjail::check::Finding;
using sjail::check::Severity;

constexpr int kUsage = 2;

struct Options {
    std::string plugstack;
    std::string slurm_conf;
    std::string line;
    bool json = false;
};

bool read_text(const std::string &path, std::string &text) {
    std::ifstream in(path);
    if (!in) {
        return false;
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
    return !in.bad();
}

struct Found {
    std::vector<sjail::check::PluginLine> chroot_lines;
    std::vector<Finding> findings;
};

void add_plugstack_file(const std::string &path, int depth, Found &found) {
    std::string text;
    if (!read_text(path, text)) {
        found.findings.push_back({Severity::Problem,
                                  "cannot read " + path + ": " + std::strerror(errno),
                                  "create plugstack.conf there with the line: required chroot.so "
                                  "jail=/mnt/jail (or pass --plugstack FILE)"});
        return;
    }
    const auto parsed = sjail::check::parse_plugstack(text, path);
    for (const auto &line : parsed.plugins) {
        if (sjail::check::loads_chroot(line)) {
            found.chroot_lines.push_back(line);
        }
    }
    for (const auto &error : parsed.errors) {
        found.findings.push_back({Severity::Warning, error, "fix or remove the line"});
    }
    for (const auto &pattern : parsed.includes) {
        if (depth > 8) {
            break;
        }
        glob_t matches{};
        if (::glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
            for (std::size_t i = 0; i < matches.gl_pathc; ++i) {
                add_plugstack_file(matches.gl_pathv[i], depth + 1, found);
            }
        }
        ::globfree(&matches);
    }
}

void print(const std::vector<Finding> &findings, bool json) {
    if (json) {
        nlohmann::json out;
        out["findings"] = nlohmann::json::array();
        for (const auto &f : findings) {
            out["findings"].push_back(
                {{"severity", f.severity == Severity::Problem ? "problem" : "warning"},
                 {"cause", f.cause},
                 {"fix", f.fix}});
        }
        out["summary"] = sjail::check::summary_line(findings);
        std::cout << out.dump(2) << "\n";
        return;
    }
    for (const auto &f : findings) {
        std::cout << sjail::check::format_finding(f) << "\n";
    }
    std::cout << sjail::check::summary_line(findings) << "\n";
}

// The chroot.so line to check: --line, or the one plugstack.conf has.
bool find_line(const Options &options, sjail::check::Subject &subject,
               std::vector<Finding> &findings) {
    if (!options.line.empty()) {
        std::string error;
        auto line = sjail::check::parse_plugin_line(options.line, error);
        if (!line) {
            std::cerr << "slurm-jail-check: --line: " << error << "\n";
            std::exit(kUsage);
        }
        subject.line = *line;
        return true;
    }
    subject.plugstack = options.plugstack.empty() ? subject.slurm.plugstack : options.plugstack;
    Found found;
    add_plugstack_file(subject.plugstack, 0, found);
    findings = found.findings;
    if (found.chroot_lines.empty()) {
        if (findings.empty() || findings.back().severity != Severity::Problem) {
            findings.push_back({Severity::Problem, subject.plugstack + " has no chroot.so line",
                                "add the line: required chroot.so jail=/mnt/jail"});
        }
        return false;
    }
    subject.line = found.chroot_lines.front();
    for (std::size_t i = 1; i < found.chroot_lines.size(); ++i) {
        findings.push_back({Severity::Warning,
                            found.chroot_lines[i].origin +
                                ": a second chroot.so line; Slurm refuses to load a plugin twice",
                            "keep only the line of " + subject.line.origin});
    }
    if (!subject.line.required) {
        findings.push_back({Severity::Warning,
                            subject.line.origin + ": chroot.so is optional: srun and sbatch then "
                                                  "ignore a line they cannot load",
                            "write \"required chroot.so ...\""});
    }
    return true;
}

int run(const Options &options) {
    sjail::check::Subject subject;
    std::vector<Finding> findings;
    std::string conf_text;
    if (read_text(options.slurm_conf, conf_text)) {
        subject.have_slurm_conf = true;
    } else {
        findings.push_back({Severity::Warning,
                            "cannot read " + options.slurm_conf +
                                ": spool= and conf_dir= were not "
                                "compared with slurm.conf",
                            "pass --slurm-conf FILE"});
    }
    subject.slurm = sjail::check::slurm_settings(sjail::check::parse_slurm_conf(conf_text),
                                                 options.slurm_conf, SJAIL_SLURM_PLUGIN_DIR);
    if (find_line(options, subject, findings)) {
        const auto parsed = sjail::parse_config(subject.line.args);
        if (!parsed.status.ok()) {
            findings.push_back({Severity::Problem,
                                subject.line.origin + ": " + parsed.status.message(),
                                "correct the chroot.so line (see chroot.so(8), SETTINGS)"});
        } else {
            subject.config = parsed.config;
            for (auto &finding : sjail::check::inspect(subject)) {
                findings.push_back(std::move(finding));
            }
        }
    }
    print(findings, options.json);
    return sjail::check::exit_status(findings);
}

int parse_and_run(int argc, char **argv) {
    Options options;
    const char *env_conf = std::getenv("SLURM_CONF");
    options.slurm_conf =
        env_conf != nullptr && *env_conf != '\0' ? env_conf : "/etc/slurm/slurm.conf";
    CLI::App app{"Checks this node and its jail against the chroot.so line of plugstack.conf and "
                 "lists every problem, each with its fix. Changes nothing.\n"
                 "Exit status: 0 no problems, 1 problems found, 2 usage error.",
                 "slurm-jail-check"};
    app.add_option("--plugstack", options.plugstack,
                   "plugstack.conf to read (default: slurm.conf's PlugStackConfig, else "
                   "plugstack.conf beside slurm.conf)");
    app.add_option("--slurm-conf", options.slurm_conf,
                   "slurm.conf to compare with (default: $SLURM_CONF or /etc/slurm/slurm.conf)");
    app.add_option("--line", options.line,
                   "check this chroot.so line instead of plugstack.conf's, e.g. "
                   "'required chroot.so jail=/mnt/jail'");
    app.add_flag("--json", options.json, "print the findings as JSON");
    app.set_version_flag("--version", SJAIL_VERSION);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        const int status = app.exit(e);
        return status == 0 ? 0 : kUsage;
    }
    return run(options);
}

} // namespace

int main(int argc, char **argv) {
    try {
        return parse_and_run(argc, argv);
    } catch (const std::exception &e) {
        std::cerr << "slurm-jail-check: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "slurm-jail-check: unexpected error\n";
    }
    return kUsage;
}
