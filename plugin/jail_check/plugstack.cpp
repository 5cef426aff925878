// SPDX-License-Identifier: Apache-2.0
#include "plugstack.hpp"

#include "sjail/core/path_rules.hpp"

namespace sjail::check {
namespace {

std::vector<std::string> fields_of(std::string_view line) {
    if (const auto hash = line.find('#'); hash != std::string_view::npos) {
        line = line.substr(0, hash);
    }
    std::vector<std::string> fields;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) {
            ++i;
        }
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
            ++i;
        }
        if (i > start) {
            fields.emplace_back(line.substr(start, i - start));
        }
    }
    return fields;
}

PluginLine plugin_line(std::string origin, bool required, const std::vector<std::string> &fields,
                       std::size_t first) {
    PluginLine out;
    out.origin = std::move(origin);
    out.required = required;
    out.plugin = fields.at(first);
    out.args.assign(fields.begin() + static_cast<std::ptrdiff_t>(first) + 1, fields.end());
    return out;
}

} // namespace

PlugstackFile parse_plugstack(std::string_view text, const std::string &file) {
    PlugstackFile out;
    std::size_t number = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        const auto fields = fields_of(text.substr(start, end - start));
        start = end + 1;
        ++number;
        if (fields.empty()) {
            continue;
        }
        const std::string origin = file + ":" + std::to_string(number);
        const std::string &kind = fields[0];
        if (fields.size() < 2 || (kind != "required" && kind != "optional" && kind != "include")) {
            out.errors.push_back(origin + ": not a \"required|optional PLUGIN [ARG]...\" or "
                                          "\"include PATTERN\" line; Slurm ignores it");
            continue;
        }
        if (kind == "include") {
            const std::string &pattern = fields[1];
            out.includes.push_back(pattern.starts_with('/') ? pattern
                                                            : parent_dir(file) + "/" + pattern);
            continue;
        }
        out.plugins.push_back(plugin_line(origin, kind == "required", fields, 1));
    }
    return out;
}

std::optional<PluginLine> parse_plugin_line(std::string_view line, std::string &error) {
    const auto fields = fields_of(line);
    if (fields.empty()) {
        error = "the line is empty";
        return std::nullopt;
    }
    if (fields[0] == "include") {
        error = "an include line loads no plugin; give the chroot.so line itself";
        return std::nullopt;
    }
    const bool has_kind = fields[0] == "required" || fields[0] == "optional";
    if (has_kind && fields.size() < 2) {
        error = "\"" + fields[0] + "\" names no plugin";
        return std::nullopt;
    }
    return plugin_line("--line", !has_kind || fields[0] == "required", fields, has_kind ? 1 : 0);
}

bool loads_chroot(const PluginLine &line) {
    return line.plugin == "chroot.so" || line.plugin.ends_with("/chroot.so");
}

} // namespace sjail::check
