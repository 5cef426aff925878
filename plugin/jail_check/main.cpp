// SPDX-License-Identifier: Apache-2.0
// slurm-jail-check: checks a node and its jail against the chroot.so line
// of plugstack.conf and lists every problem at once, each with its fix.
// See man/slurm-jail-check.8.
#include "finding.hpp"
#include "inspect.hpp"
#include "job_container_lines.hpp"
#include "sjail/core/config.hpp"
#include "sjail/core/parse_config.hpp"
#include "sjail/core/plugstack.hpp"
#include "sjail/sys/node/jail_generation.hpp"
#include "sjail/sys/plugstack.hpp"
#include "slurm_conf.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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

// A finding for each line Slurm ignores or reads otherwise than it looks.
void add_notes(const std::vector<sjail::PlugstackNote> &notes, std::vector<Finding> &findings) {
    for (const auto &note : notes) {
        findings.push_back({Severity::Warning, note.cause, note.fix});
    }
}

// " (include lines that match no file: A, B)", or "".
std::string unmatched(const std::vector<std::string> &empty_includes) {
    std::string out;
    for (const auto &include : empty_includes) {
        out += (out.empty() ? " (include lines that match no file: " : ", ") + include;
    }
    return out.empty() ? out : out + ")";
}

// plugstack.conf and what it includes, as Slurm reads them, with the
// reader of pam_slurm_jail; its chroot.so lines in Slurm's order.
std::vector<sjail::PluginLine> read_chroot_lines(sjail::check::Subject &subject,
                                                 std::vector<Finding> &findings) {
    const std::string &path = subject.plugstack;
    const std::string absolute =
        path.starts_with('/') ? path : std::filesystem::absolute(path).string();
    const auto read = sjail::read_plugstack(absolute);
    subject.plugstack_files = read.files;
    subject.plugins = read.plugins;
    add_notes(read.notes, findings);
    if (!read.cause.empty()) {
        findings.push_back(
            {Severity::Problem, read.cause,
             read.files.empty() ? read.fix + " (or pass --plugstack FILE)" : read.fix});
        return {};
    }
    auto lines = sjail::chroot_lines(read.plugins);
    if (lines.empty()) {
        findings.push_back({Severity::Problem,
                            path + " has no chroot.so line" +
                                (read.files.size() > 1 ? ", nor has any file it includes" : "") +
                                unmatched(read.empty_includes),
                            "add the line: required chroot.so jail=/mnt/jail"});
    }
    return lines;
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
        auto line = sjail::parse_plugin_line(options.line, error);
        if (!line) {
            std::cerr << "slurm-jail-check: --line: " << error << "\n";
            std::exit(kUsage);
        }
        subject.line = *line;
        return true;
    }
    subject.plugstack = options.plugstack.empty() ? subject.slurm.plugstack : options.plugstack;
    const auto lines = read_chroot_lines(subject, findings);
    if (lines.empty()) {
        return false;
    }
    subject.line = lines.front();
    for (std::size_t i = 1; i < lines.size(); ++i) {
        findings.push_back({Severity::Problem,
                            lines[i].origin +
                                ": a second chroot.so line; Slurm refuses to load a plugin twice "
                                "and pam_slurm_jail refuses every login",
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
    const auto conf = sjail::check::parse_slurm_conf(conf_text);
    subject.slurm = sjail::check::slurm_settings(conf, options.slurm_conf, SJAIL_SLURM_PLUGIN_DIR);
    if (subject.have_slurm_conf) {
        const sjail::check::SlurmInterface built_for{SJAIL_SLURM_RELEASE,
                                                     SJAIL_SLURM_NAMESPACE_PLUGINS != 0};
        for (auto &finding : sjail::check::check_job_container_lines(
                 sjail::check::job_container_lines(conf), built_for)) {
            findings.push_back(std::move(finding));
        }
    }
    if (find_line(options, subject, findings)) {
        const auto parsed = sjail::parse_config(subject.line.args);
        if (!parsed.status.ok()) {
            findings.push_back({Severity::Problem,
                                subject.line.origin + ": " + parsed.status.message(),
                                "correct the chroot.so line (see chroot.so(8), SETTINGS)"});
        } else if (const auto live = sjail::resolve_live_jail(parsed.config, subject.config,
                                                              sjail::LiveRead::Fresh);
                   !live.ok()) {
            findings.push_back({Severity::Problem, live.message(),
                                "see populate-jail(8) on the jail volume's generations"});
        } else {
            // On a volume with generations, the live one is checked.
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
