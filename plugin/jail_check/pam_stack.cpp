// SPDX-License-Identifier: Apache-2.0
#include "pam_stack.hpp"

#include "sjail/core/path_rules.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace sjail::check {
namespace {

constexpr int kMaxDepth = 16;

struct LogicalLine {
    std::size_t number = 0; // of its first physical line
    std::string text;
};

// The file's lines as PAM reads them: from '#' to the end of a line is a
// comment, a line ending in '\' goes on on the next one, blank lines go.
std::vector<LogicalLine> logical_lines(std::string_view text) {
    std::vector<LogicalLine> out;
    LogicalLine current;
    std::size_t number = 0;
    const auto flush = [&out, &current] {
        if (!words_of(current.text).empty()) {
            out.push_back(current);
        }
        current = {};
    };
    for (const auto raw : split(text, '\n')) {
        ++number;
        std::string line(raw);
        if (current.text.empty()) {
            current.number = number;
        }
        if (const auto hash = line.find('#'); hash != std::string::npos) {
            line.erase(hash);
        }
        const bool continued = !line.empty() && line.back() == '\\';
        if (continued) {
            line.pop_back();
        }
        current.text += line + " ";
        if (!continued) {
            flush();
        }
    }
    flush();
    return out;
}

// The words of a line, a bracketed control ("[success=1 default=ignore]")
// as one word with its blanks squeezed.
std::vector<std::string> tokens_of(const std::string &line) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < line.size()) {
        if (std::isspace(static_cast<unsigned char>(line[i])) != 0) {
            ++i;
            continue;
        }
        std::size_t end = i;
        if (line[i] == '[') {
            const std::size_t closing = std::min(line.find(']', i), line.size());
            end = std::min(closing + 1, line.size());
            std::string inner;
            for (const auto &word : words_of(line.substr(i + 1, closing - i - 1))) {
                inner += (inner.empty() ? "" : " ") + word;
            }
            out.push_back("[" + inner + "]");
        } else {
            while (end < line.size() && std::isspace(static_cast<unsigned char>(line[end])) == 0) {
                ++end;
            }
            out.push_back(line.substr(i, end - i));
        }
        i = end;
    }
    return out;
}

bool all_digits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// What a control does beyond going on: "done" ends the stack, "N" jumps.
void read_actions(const std::string &control, PamModuleLine &line) {
    if (control == "sufficient") {
        line.ends_stack = true;
        return;
    }
    if (control.size() < 2 || control.front() != '[') {
        return; // required, requisite, optional: the stack goes on (or fails)
    }
    for (const auto &pair : words_of(control.substr(1, control.size() - 2))) {
        const auto eq = pair.find('=');
        const std::string action = eq == std::string::npos ? "" : pair.substr(eq + 1);
        if (action == "done") {
            line.ends_stack = true;
        } else if (all_digits(action) && action.size() < 6) {
            line.jump = std::max(line.jump, static_cast<std::size_t>(std::stoul(action)));
        }
    }
}

class StackReader {
  public:
    StackReader(const PamFileReader &read, PamSessionStack &out) : read_(read), out_(out) {}

    void file(const std::string &name, std::size_t stack, int depth, const std::string &from) {
        const std::string path = name.starts_with("/") ? name : "/etc/pam.d/" + name;
        if (depth > kMaxDepth) {
            out_.unreadable.push_back(from + ": includes " + path +
                                      " more than 16 files deep (an include loop?)");
            return;
        }
        const auto text = read_(name);
        if (!text) {
            out_.unreadable.push_back((from.empty() ? "" : from + ": ") + path + " cannot be read");
            return;
        }
        for (const auto &line : logical_lines(*text)) {
            entry(tokens_of(line.text), path + ":" + std::to_string(line.number), stack, depth);
        }
    }

  private:
    void entry(const std::vector<std::string> &tokens, const std::string &where, std::size_t stack,
               int depth) {
        if (tokens[0] == "@include") {
            if (tokens.size() >= 2) {
                file(tokens[1], stack, depth + 1, where);
            }
            return;
        }
        const std::string type = tokens[0].starts_with("-") ? tokens[0].substr(1) : tokens[0];
        if (type != "session" || tokens.size() < 3) {
            return;
        }
        if (tokens[1] == "include") {
            file(tokens[2], stack, depth + 1, where);
            return;
        }
        if (tokens[1] == "substack") {
            out_.substacks.push_back({stack, next_position(stack)});
            file(tokens[2], out_.substacks.size(), depth + 1, where);
            return;
        }
        PamModuleLine line;
        line.where = where;
        for (const auto &token : tokens) {
            line.text += (line.text.empty() ? "" : " ") + token;
        }
        line.control = tokens[1];
        line.module = tokens[2];
        line.stack = stack;
        line.position = next_position(stack);
        read_actions(line.control, line);
        out_.lines.push_back(std::move(line));
    }

    std::size_t next_position(std::size_t stack) {
        if (positions_.size() <= stack) {
            positions_.resize(stack + 1, 0);
        }
        return positions_[stack]++;
    }

    const PamFileReader &read_;
    PamSessionStack &out_;
    std::vector<std::size_t> positions_;
};

} // namespace

PamSessionStack read_session_stack(const std::string &service, const PamFileReader &read) {
    PamSessionStack out;
    StackReader(read, out).file(service, 0, 0, "");
    return out;
}

bool names_module(const std::string &module, const std::string &name) {
    return module == name || module.ends_with("/" + name);
}

} // namespace sjail::check
