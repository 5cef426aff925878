// SPDX-License-Identifier: Apache-2.0
// Every metric the renderers write is in health/README.md's metrics table,
// and every name in that table is written by a renderer.
#include "dcgm_verdict.hpp"
#include "fabric_metrics.hpp"
#include "nccl_metrics.hpp"
#include "report.hpp"

#include "test_util.hpp"

#include <gtest/gtest.h>
#include <regex>
#include <set>

namespace sjh {
namespace {

std::set<std::string> names_in(const std::string &text, const std::regex &re) {
    std::set<std::string> out;
    for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
        out.insert((*it)[1].str());
    }
    return out;
}

std::string everything_rendered() {
    const RunInfo info{"n1", 1, 2};
    Evaluation ev;
    ev.statuses = {{"nvml", std::nullopt, true}};
    IbPortReading port;
    port.name = "mlx5_0/1";
    port.rate = "400 Gb/sec (4X NDR)";
    port.link_downed = 0;
    port.symbol_error = 0;
    DcgmOutcome dcgm;
    dcgm.outcome = "ok";
    dcgm.results = {{"Hardware", "memory", 0U, "", DcgmStatus::pass, "Pass", ""}};
    NcclMetrics nccl;
    nccl.busbw_gbps = 480;
    nccl.threshold_gbps = 400;
    FabricMetrics fabric;
    fabric.nodes = {"n1", "n2"};
    fabric.groups = {{fabric.nodes, false, 5.0, "slow"}};
    fabric.threshold_gbps = {{2U, 30.0}};
    return render_metrics(ev, info) + render_ib_port_metrics({port}, info) +
           render_dcgm_metrics(dcgm, DcgmPolicy{}, info) + render_nccl_metrics(nccl) +
           render_fabric_metrics(fabric);
}

TEST(MetricsDocs, ReadmeTableMatchesTheRenderers) {
    const auto readme = test::read_file(std::filesystem::path(SJH_SOURCE_DIR) / "health/README.md");
    const auto documented = names_in(readme, std::regex(R"(\n\| `(slurm_jail_[a-z_]+)` \|)"));
    const auto rendered = names_in(everything_rendered(), std::regex(R"(# TYPE (\S+) )"));
    EXPECT_GE(rendered.size(), 23U);
    EXPECT_EQ(documented, rendered);
}

} // namespace
} // namespace sjh
