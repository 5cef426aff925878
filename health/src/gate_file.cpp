// SPDX-License-Identifier: Apache-2.0
#include "gate_file.hpp"

#include "text.hpp"
#include "trusted_files.hpp"

#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sjh {
namespace {

std::optional<GatePass> read_pass(const std::string &path, std::string_view check) {
    std::ifstream in(path);
    if (!in) {
        return std::nullopt;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        return parse_gate_pass(ss.str(), check);
    } catch (const std::exception &e) {
        throw std::runtime_error(fmt::format("gate file '{}' is not valid: {}; delete it (the "
                                             "node then waits for that check to pass again)",
                                             path, e.what()));
    }
}

} // namespace

std::string read_boot_id(const std::string &path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line) || trim(line).empty()) {
        throw std::runtime_error(
            fmt::format("cannot read the boot id from '{}': the new-node gate needs it; pass "
                        "--boot-id-file PATH where /proc is not the host's",
                        path));
    }
    return std::string(trim(line));
}

std::string gate_record_path(const std::string &dir, std::string_view node,
                             std::string_view check) {
    return fmt::format("{}/gate.{}.{}", dir, node, check);
}

GateRecords read_gate_records(const std::string &dir, std::string_view node) {
    GateRecords r;
    if (!check_state_dir(dir)) {
        return r;
    }
    r.gpu = read_pass(gate_record_path(dir, node, "gpu"), "gpu");
    r.nccl = read_pass(gate_record_path(dir, node, "nccl"), "nccl");
    return r;
}

void write_gate_pass(const std::string &dir, std::string_view node, std::string_view check,
                     const GatePass &pass) {
    make_state_dir(dir);
    write_file_atomically(gate_record_path(dir, node, check), render_gate_pass(check, pass), 0600);
}

} // namespace sjh
