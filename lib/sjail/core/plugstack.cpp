// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/plugstack.hpp"

#include "sjail/core/path_rules.hpp"

#include <algorithm>
#include <array>

namespace sjail {
namespace {

constexpr std::array<std::string_view, 3> kKeywords = {"required", "optional", "include"};

bool is_keyword(std::string_view word) {
    return std::find(kKeywords.begin(), kKeywords.end(), word) != kKeywords.end();
}

std::string lower(std::string_view word) {
    std::string out(word);
    std::transform(out.begin(), out.end(), out.begin(), [](char c) {
        return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    });
    return out;
}

PluginLine plugin_line(std::string origin, bool required, const std::vector<std::string> &words,
                       std::size_t first) {
    PluginLine out;
    out.origin = std::move(origin);
    out.required = required;
    out.plugin = words.at(first);
    out.args.assign(words.begin() + static_cast<std::ptrdiff_t>(first) + 1, words.end());
    return out;
}

// Why Slurm ignores a line whose words are `words` (not empty), or "" when it does not.
PlugstackNote ignored_line(const std::string &origin, const std::vector<std::string> &words) {
    const std::string &kind = words[0];
    if (!is_keyword(kind)) {
        if (is_keyword(lower(kind))) {
            return {origin + ": \"" + kind +
                        "\" is not a keyword (Slurm's are lower case); "
                        "Slurm ignores the line",
                    "write \"" + lower(kind) + "\""};
        }
        return {origin + ": not a \"required|optional PLUGIN [ARG]...\" or \"include "
                         "PATTERN\" line; Slurm ignores it",
                "fix or remove the line"};
    }
    if (words.size() < 2) {
        return {origin + ": \"" + kind + "\" names nothing; Slurm ignores the line",
                kind == "include" ? "add the pattern of the files to include, or remove the line"
                                  : "add the plugin, or remove the line"};
    }
    return {};
}

// A carriage return left in a word (a file with DOS line ends).
bool has_carriage_return(const std::vector<std::string> &words) {
    return std::any_of(words.begin(), words.end(),
                       [](const std::string &w) { return w.find('\r') != std::string::npos; });
}

// The lines of `text` as Slurm's fgets reads them: through the newline, at
// most kPlugstackLineMax characters at a time.
std::vector<std::string_view> slurm_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        const auto newline = text.find('\n', start);
        const std::size_t through = newline == std::string_view::npos ? text.size() : newline + 1;
        const std::size_t length = std::min(through - start, kPlugstackLineMax);
        lines.push_back(text.substr(start, length));
        start += length;
    }
    return lines;
}

void add_line(PlugstackText &out, std::string_view line, const std::string &file,
              std::size_t number) {
    const std::string origin = file + ":" + std::to_string(number);
    if (line.size() == kPlugstackLineMax && !line.ends_with('\n')) {
        out.notes.push_back({origin + ": longer than " + std::to_string(kPlugstackLineMax) +
                                 " characters; Slurm reads the rest as the next line",
                             "shorten the line"});
    }
    const auto words = words_of(line);
    if (words.empty()) {
        return;
    }
    if (auto note = ignored_line(origin, words); !note.cause.empty()) {
        out.notes.push_back(std::move(note));
        return;
    }
    if (has_carriage_return(words)) {
        out.notes.push_back({origin + ": a carriage return (a DOS line end) is part of a word "
                                      "for Slurm",
                             "convert the file to Unix line ends (dos2unix " + file + ")"});
    }
    if (words[0] == "include") {
        out.entries.emplace_back(IncludeLine{origin, include_pattern(words[1], file)});
        return;
    }
    out.entries.emplace_back(plugin_line(origin, words[0] == "required", words, 1));
}

} // namespace

std::string include_pattern(std::string_view pattern, std::string_view file) {
    if (pattern.starts_with('/')) {
        return std::string(pattern);
    }
    // dirname(3): trailing slashes do not count; no '/' at all is ".".
    while (file.size() > 1 && file.ends_with('/')) {
        file.remove_suffix(1);
    }
    const auto slash = file.rfind('/');
    std::string dir = slash == std::string_view::npos ? "."
                      : slash == 0                    ? "/"
                                                      : std::string(file.substr(0, slash));
    return dir + "/" + std::string(pattern);
}

PlugstackText parse_plugstack(std::string_view text, const std::string &file) {
    PlugstackText out;
    std::size_t number = 0;
    for (const auto line : slurm_lines(text)) {
        add_line(out, line, file, ++number);
    }
    return out;
}

std::optional<PluginLine> parse_plugin_line(std::string_view line, std::string &error) {
    const auto words = words_of(line);
    if (words.empty()) {
        error = "the line is empty";
        return std::nullopt;
    }
    if (words[0] == "include") {
        error = "an include line loads no plugin; give the chroot.so line itself";
        return std::nullopt;
    }
    const bool has_kind = words[0] == "required" || words[0] == "optional";
    if (has_kind && words.size() < 2) {
        error = "\"" + words[0] + "\" names no plugin";
        return std::nullopt;
    }
    return plugin_line("--line", !has_kind || words[0] == "required", words, has_kind ? 1 : 0);
}

bool loads_chroot(const PluginLine &line) {
    return line.plugin == "chroot.so" || line.plugin.ends_with("/chroot.so");
}

std::vector<PluginLine> chroot_lines(const std::vector<PluginLine> &plugins) {
    std::vector<PluginLine> out;
    std::copy_if(plugins.begin(), plugins.end(), std::back_inserter(out), loads_chroot);
    return out;
}

} // namespace sjail
