// SPDX-License-Identifier: Apache-2.0
#include "gpu_snapshot.hpp"

namespace sjh {
namespace {

template <typename T> void put(nlohmann::json &j, const char *key, const std::optional<T> &v) {
    if (v) {
        j[key] = *v;
    } else {
        j[key] = nullptr;
    }
}

template <typename T> void get(const nlohmann::json &j, const char *key, std::optional<T> &v) {
    if (j.contains(key) && !j.at(key).is_null()) {
        v = j.at(key).get<T>();
    } else {
        v.reset();
    }
}

} // namespace

void to_json(nlohmann::json &j, const GpuSnapshot &g) {
    j = nlohmann::json{{"index", g.index},
                       {"name", g.name},
                       {"bus_id", g.bus_id},
                       {"serial", g.serial},
                       {"lost", g.lost},
                       {"errors", g.errors},
                       {"nvlinks_inactive", g.nvlinks_inactive}};
    put(j, "ecc_uncorrected_volatile", g.ecc_uncorrected_volatile);
    put(j, "retired_pages_pending", g.retired_pages_pending);
    put(j, "remap_pending", g.remap_pending);
    put(j, "remap_failed", g.remap_failed);
    put(j, "pcie_gen", g.pcie_gen);
    put(j, "pcie_gen_max", g.pcie_gen_max);
    put(j, "pcie_width", g.pcie_width);
    put(j, "pcie_width_max", g.pcie_width_max);
    put(j, "nvlinks_total", g.nvlinks_total);
    put(j, "temperature_c", g.temperature_c);
    put(j, "slowdown_temp_c", g.slowdown_temp_c);
    put(j, "throttle_reasons", g.throttle_reasons);
}

void from_json(const nlohmann::json &j, GpuSnapshot &g) {
    g.index = j.at("index").get<unsigned>();
    g.name = j.at("name").get<std::string>();
    g.bus_id = j.at("bus_id").get<std::string>();
    g.serial = j.value("serial", "");
    g.lost = j.at("lost").get<std::string>();
    g.errors = j.at("errors").get<std::vector<std::string>>();
    g.nvlinks_inactive = j.at("nvlinks_inactive").get<std::vector<unsigned>>();
    get(j, "ecc_uncorrected_volatile", g.ecc_uncorrected_volatile);
    get(j, "retired_pages_pending", g.retired_pages_pending);
    get(j, "remap_pending", g.remap_pending);
    get(j, "remap_failed", g.remap_failed);
    get(j, "pcie_gen", g.pcie_gen);
    get(j, "pcie_gen_max", g.pcie_gen_max);
    get(j, "pcie_width", g.pcie_width);
    get(j, "pcie_width_max", g.pcie_width_max);
    get(j, "nvlinks_total", g.nvlinks_total);
    get(j, "temperature_c", g.temperature_c);
    get(j, "slowdown_temp_c", g.slowdown_temp_c);
    get(j, "throttle_reasons", g.throttle_reasons);
}

void to_json(nlohmann::json &j, const NodeSnapshot &n) {
    j = nlohmann::json{{"count", n.count}, {"gpus", n.gpus}};
}

void from_json(const nlohmann::json &j, NodeSnapshot &n) {
    n.count = j.at("count").get<unsigned>();
    n.gpus = j.at("gpus").get<std::vector<GpuSnapshot>>();
}

} // namespace sjh
