// SPDX-License-Identifier: Apache-2.0
#include "dcgm_diag.hpp"

#include "text.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace sjh {
namespace {

using nlohmann::json;

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string string_or_empty(const json &j, const char *key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "0" or 0 as a GPU id; nullopt for anything else ("0,1,2" included).
std::optional<unsigned> gpu_id(const json &v) {
    if (v.is_number_unsigned()) {
        return v.get<unsigned>();
    }
    if (v.is_string()) {
        const auto s = v.get<std::string>();
        if (!s.empty() && s.size() < 6 &&
            std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
            return static_cast<unsigned>(std::stoul(s));
        }
    }
    return std::nullopt;
}

// Warnings are {"warning": text, "error_id": ...}; DCGM 3.x wrote the text of
// level-one tests under "warnings" instead.
std::string warnings_text(const json &result) {
    const auto it = result.find("warnings");
    if (it == result.end() || !it->is_array()) {
        return {};
    }
    std::string out;
    for (const auto &w : *it) {
        std::string text;
        if (w.is_object()) {
            text = string_or_empty(w, "warning");
            if (text.empty()) {
                text = string_or_empty(w, "warnings");
            }
        } else if (w.is_string()) {
            text = w.get<std::string>();
        }
        text = std::string(trim(text));
        if (!text.empty()) {
            out += out.empty() ? text : "; " + text;
        }
    }
    return out;
}

// Which entity a result is about: a GPU, another entity ("CPU 0"), or the node.
void read_entity(const json &r, DcgmResult &out) {
    if (const auto it = r.find("entity_id"); it != r.end()) {
        const auto group = string_or_empty(r, "entity_group");
        if (group.empty() || group == "GPU") {
            out.gpu = gpu_id(*it);
        }
        if (!out.gpu) {
            out.entity = fmt::format("{} {}", group.empty() ? "entity" : group, it->dump());
        }
        return;
    }
    for (const char *key : {"gpu_id", "gpu_ids"}) {
        if (const auto it = r.find(key); it != r.end()) {
            out.gpu = gpu_id(*it);
            if (!out.gpu) {
                out.entity = it->is_string() ? "GPUs " + it->get<std::string>() : it->dump();
            }
            return;
        }
    }
}

DcgmResult read_result(const json &r, const std::string &category, const std::string &test) {
    DcgmResult out;
    out.category = category;
    out.test = test;
    read_entity(r, out);
    out.status_text = string_or_empty(r, "status");
    out.status = parse_dcgm_status(out.status_text);
    out.message = warnings_text(r);
    return out;
}

void read_test(const json &t, const std::string &category, std::vector<DcgmResult> &out) {
    if (!t.is_object()) {
        return; // 3.x wrote null entries into its arrays
    }
    const auto name = string_or_empty(t, "name");
    const auto results = t.find("results");
    bool any = false;
    if (results != t.end() && results->is_array()) {
        for (const auto &r : *results) {
            if (r.is_object()) {
                out.push_back(read_result(r, category, name));
                any = true;
            }
        }
    }
    // A test with no result of its own (4.x: errors not bound to an entity)
    // is judged by its summary, as a result about the whole node.
    const auto summary = t.find("test_summary");
    if (!any && summary != t.end() && summary->is_object()) {
        out.push_back(read_result(*summary, category, name));
    }
}

const json *diagnostic_object(const json &doc) {
    for (const char *key : {"DCGM Diagnostic", "DCGM GPU Diagnostic"}) {
        if (const auto it = doc.find(key); it != doc.end() && it->is_object()) {
            return &*it;
        }
    }
    return nullptr;
}

std::string version_of(const json &doc, const json &diag) {
    if (const auto m = doc.find("metadata"); m != doc.end() && m->is_object()) {
        if (auto v = string_or_empty(*m, "version"); !v.empty()) {
            return v;
        }
    }
    if (auto v = string_or_empty(doc, "version"); !v.empty()) {
        return v;
    }
    return string_or_empty(diag, "version");
}

} // namespace

DcgmStatus parse_dcgm_status(std::string_view text) {
    const auto s = lower(trim(text));
    if (s == "pass") {
        return DcgmStatus::pass;
    }
    if (s == "fail") {
        return DcgmStatus::fail;
    }
    if (s == "warn") {
        return DcgmStatus::warn;
    }
    if (s == "skip") {
        return DcgmStatus::skip;
    }
    if (s == "not run") {
        return DcgmStatus::not_run;
    }
    return DcgmStatus::unknown;
}

std::string_view dcgm_status_name(DcgmStatus s) {
    switch (s) {
    case DcgmStatus::pass:
        return "pass";
    case DcgmStatus::fail:
        return "fail";
    case DcgmStatus::warn:
        return "warn";
    case DcgmStatus::skip:
        return "skip";
    case DcgmStatus::not_run:
        return "not_run";
    case DcgmStatus::unknown:
        break;
    }
    return "unknown";
}

DcgmReport parse_dcgm_diag(std::string_view output) {
    const auto start = output.find('{');
    if (start == std::string_view::npos) {
        throw std::invalid_argument("no JSON object in dcgmi's output");
    }
    // From the first '{' to the last '}': dcgmi may print lines around it.
    const auto end = output.rfind('}');
    const json doc = json::parse(output.substr(start, end - start + 1), nullptr, false);
    if (doc.is_discarded()) {
        throw std::invalid_argument("dcgmi's output is not valid JSON");
    }
    const json *diag = doc.is_object() ? diagnostic_object(doc) : nullptr;
    if (diag == nullptr) {
        throw std::invalid_argument(
            "dcgmi's JSON has no \"DCGM Diagnostic\" (DCGM 4) or \"DCGM GPU Diagnostic\" (DCGM 3) "
            "object");
    }
    DcgmReport report;
    report.version = version_of(doc, *diag);
    if (auto err = string_or_empty(*diag, "runtime_error"); !err.empty()) {
        report.runtime_error = std::string(trim(err));
    }
    const auto cats = diag->find("test_categories");
    if (cats != diag->end() && cats->is_array()) {
        for (const auto &c : *cats) {
            if (!c.is_object()) {
                continue;
            }
            const auto category = string_or_empty(c, "category");
            const auto tests = c.find("tests");
            if (tests != c.end() && tests->is_array()) {
                for (const auto &t : *tests) {
                    read_test(t, category, report.results);
                }
            }
        }
    }
    if (report.results.empty() && !report.runtime_error) {
        throw std::invalid_argument("dcgmi's JSON holds no test result");
    }
    return report;
}

} // namespace sjh
