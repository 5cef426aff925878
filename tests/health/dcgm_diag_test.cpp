// SPDX-License-Identifier: Apache-2.0
// The dcgmi diag JSON parser and the verdict over every file in
// fixtures/dcgm/ (their sources: fixtures/dcgm/README.md).
#include "dcgm_diag.hpp"
#include "dcgm_verdict.hpp"

#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace sjh {
namespace {

std::string dcgm_fixture(const std::string &name) {
    return test::read_file(std::filesystem::path(SJH_DCGM_FIXTURES) / name);
}

DcgmRun ran(std::string output, int exit_code = 0) {
    DcgmRun r;
    r.found = true;
    r.started = true;
    r.exit_code = exit_code;
    r.output = std::move(output);
    return r;
}

DcgmPolicy policy(unsigned level = 1, bool required = false) {
    DcgmPolicy p;
    p.level = level;
    p.required = required;
    p.timeout_s = 20;
    return p;
}

TEST(DcgmDiag, Dcgm4Level1Gb10SoftwareFail) {
    const auto r = parse_dcgm_diag(dcgm_fixture("dcgm4_r1_gb10_software_fail.json"));
    EXPECT_EQ(r.version, "4.2.3");
    EXPECT_FALSE(r.runtime_error);
    ASSERT_EQ(r.results.size(), 1U); // the summary repeats GPU 0's result: not counted twice
    EXPECT_EQ(r.results[0].category, "Deployment");
    EXPECT_EQ(r.results[0].test, "software");
    EXPECT_EQ(r.results[0].gpu, 0U);
    EXPECT_EQ(r.results[0].status, DcgmStatus::fail);
    EXPECT_EQ(r.results[0].message,
              "Persistence Mode: Persistence mode for GPU 0 is disabled. Enable persistence mode "
              "by running \"nvidia-smi -i <gpuId> -pm 1 \" as root.");
}

TEST(DcgmDiag, Dcgm4Level3EightGpusPass) {
    // The recorded test entry, in the writer's nesting (the derived_ file is the same).
    const auto fragment =
        nlohmann::json::parse(dcgm_fixture("dcgm4_r3_diagnostic_test_8gpu_pass.fragment.json"));
    nlohmann::json category;
    category["category"] = "Hardware";
    category["tests"] = nlohmann::json::array({fragment});
    nlohmann::json doc;
    doc["DCGM Diagnostic"]["test_categories"] = nlohmann::json::array({category});
    const auto r = parse_dcgm_diag(doc.dump());
    const auto derived = parse_dcgm_diag(dcgm_fixture("derived_dcgm4_r3_pass_8gpu.json"));
    ASSERT_EQ(r.results.size(), 8U);
    ASSERT_EQ(derived.results.size(), 8U);
    for (unsigned i = 0; i < 8; ++i) {
        EXPECT_EQ(r.results[i].test, "diagnostic");
        EXPECT_EQ(r.results[i].gpu, i);
        EXPECT_EQ(r.results[i].status, DcgmStatus::pass);
        EXPECT_EQ(r.results[i].message, ""); // info lines are not warnings
        EXPECT_EQ(derived.results[i].gpu, i);
    }
    Evaluation ev;
    const auto o = judge_dcgm(ran(dcgm_fixture("derived_dcgm4_r3_pass_8gpu.json")), policy(3), ev);
    EXPECT_EQ(o.outcome, "ok");
    EXPECT_TRUE(ev.problems.empty());
    ASSERT_EQ(ev.statuses.size(), 1U);
    EXPECT_TRUE(ev.statuses[0].ok);
}

TEST(DcgmDiag, Dcgm3Level3SkippedTestsAreNeitherFailNorWarn) {
    const auto r = parse_dcgm_diag(dcgm_fixture("derived_dcgm3_r3_t400_skip.json"));
    ASSERT_EQ(r.results.size(), 4U);
    EXPECT_EQ(r.results[0].category, "Integration");
    EXPECT_EQ(r.results[0].test, "PCIe");
    EXPECT_EQ(r.results[1].test, "GPU Memory");
    EXPECT_EQ(r.results[3].test, "EUD Test");
    for (const auto &x : r.results) {
        EXPECT_EQ(x.gpu, 0U);
        EXPECT_EQ(x.status, DcgmStatus::skip);
    }
    Evaluation ev;
    judge_dcgm(ran(dcgm_fixture("derived_dcgm3_r3_t400_skip.json")), policy(3), ev);
    EXPECT_TRUE(ev.problems.empty());
}

TEST(DcgmDiag, FailDrainsNamingTestAndGpu) {
    Evaluation ev;
    judge_dcgm(ran(dcgm_fixture("derived_dcgm4_r3_fail_gpu3.json"), 226), policy(3), ev);
    ASSERT_EQ(ev.problems.size(), 1U);
    EXPECT_EQ(ev.problems[0].severity, Severity::drain);
    EXPECT_EQ(ev.problems[0].gpu, 3U);
    EXPECT_EQ(ev.problems[0].message, "dcgm: diagnostic gpu 3: fail");
    EXPECT_FALSE(ev.statuses.back().ok);

    Evaluation gb10;
    judge_dcgm(ran(dcgm_fixture("dcgm4_r1_gb10_software_fail.json"), 226), policy(), gb10);
    ASSERT_EQ(gb10.problems.size(), 1U);
    EXPECT_TRUE(gb10.must_drain());
    EXPECT_TRUE(gb10.cause().starts_with("dcgm: software gpu 0: fail: Persistence Mode:"));
}

TEST(DcgmDiag, WarnWarns) {
    Evaluation ev;
    judge_dcgm(ran(dcgm_fixture("derived_dcgm4_r1_gb10_warn.json")), policy(), ev);
    ASSERT_EQ(ev.problems.size(), 1U);
    EXPECT_EQ(ev.problems[0].severity, Severity::warn);
    EXPECT_TRUE(ev.problems[0].message.starts_with("dcgm: software gpu 0: warn: Persistence"));
    EXPECT_FALSE(ev.must_drain());
}

TEST(DcgmDiag, StatusWords) {
    EXPECT_EQ(parse_dcgm_status("Pass"), DcgmStatus::pass);
    EXPECT_EQ(parse_dcgm_status("FAIL"), DcgmStatus::fail);
    EXPECT_EQ(parse_dcgm_status("Warn"), DcgmStatus::warn);
    EXPECT_EQ(parse_dcgm_status("Skip"), DcgmStatus::skip);
    EXPECT_EQ(parse_dcgm_status("Not Run"), DcgmStatus::not_run);
    EXPECT_EQ(parse_dcgm_status("Inconclusive"), DcgmStatus::unknown);
    EXPECT_EQ(parse_dcgm_status(""), DcgmStatus::unknown);
}

TEST(DcgmDiag, NoVerdictOutcomesAreDistinctAndWarnUnlessRequired) {
    struct Case {
        DcgmRun run;
        std::string outcome;
        std::string message_start;
    };
    DcgmRun missing;
    missing.not_found = "No such file or directory";
    DcgmRun hung = ran("");
    hung.timed_out = true;
    const std::vector<Case> cases = {
        {missing, "missing", "dcgm: dcgmi not found (No such file or directory): install DCGM"},
        {hung, "timeout", "dcgm: dcgmi diag -r 1 did not finish within 20.0 s and was killed"},
        {ran(dcgm_fixture("dcgmi_no_hostengine.txt"), 235), "no_hostengine",
         "dcgm: nv-hostengine is not reachable (dcgmi: Error: unable to establish a connection "
         "to the specified host: localhost): start it"},
        {ran("Error: something else\n", 1), "unreadable",
         "dcgm: dcgmi diag -r 1 exited 1 without a readable result (no JSON object in dcgmi's "
         "output): Error: something else"},
        {ran("{\"DCGM Diagnostic\": {\"test_categories\": [", 1), "unreadable",
         "dcgm: dcgmi diag -r 1 exited 1 without a readable result (dcgmi's output is not valid "
         "JSON)"},
        {ran(R"({"DCGM Diagnostic": {"runtime_error": "Error: GPU 0 is busy", "version": "4.6.0"}})",
             1),
         "runtime_error", "dcgm: the diagnostic did not run: Error: GPU 0 is busy"},
        {ran(dcgm_fixture("derived_dcgm4_r3_pass_8gpu.json"), 3), "ok",
         "dcgm: dcgmi diag -r 1 exited 3 although no test failed"},
    };
    for (const auto &c : cases) {
        for (const bool required : {false, true}) {
            Evaluation ev;
            const auto o = judge_dcgm(c.run, policy(1, required), ev);
            EXPECT_EQ(o.outcome, c.outcome);
            ASSERT_EQ(ev.problems.size(), 1U) << c.outcome;
            EXPECT_EQ(ev.problems[0].severity, required ? Severity::drain : Severity::warn);
            EXPECT_TRUE(ev.problems[0].message.starts_with(c.message_start))
                << ev.problems[0].message;
            EXPECT_FALSE(ev.statuses.back().ok);
        }
    }
}

TEST(DcgmDiag, NotADiagnosticDocumentIsRefused) {
    EXPECT_THROW(parse_dcgm_diag(R"({"version": "4.2.3"})"), std::invalid_argument);
    EXPECT_THROW(parse_dcgm_diag(R"({"DCGM Diagnostic": {"test_categories": []}})"),
                 std::invalid_argument);
}

TEST(DcgmDiag, MetricsPerTestAndGpu) {
    Evaluation ev;
    const auto o =
        judge_dcgm(ran(dcgm_fixture("derived_dcgm4_r3_fail_gpu3.json"), 226), policy(3), ev);
    const auto text = render_dcgm_metrics(o, policy(3), {"n1", 1, 2});
    EXPECT_NE(text.find("slurm_jail_gpu_check_dcgm_result{node=\"n1\",test=\"diagnostic\","
                        "gpu=\"3\"} 0\n"),
              std::string::npos);
    EXPECT_NE(text.find("slurm_jail_gpu_check_dcgm_result{node=\"n1\",test=\"diagnostic\","
                        "gpu=\"2\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("slurm_jail_gpu_check_dcgm_level{node=\"n1\"} 3\n"), std::string::npos);
    EXPECT_NE(text.find("slurm_jail_gpu_check_dcgm_outcome{node=\"n1\",outcome=\"ok\"} 1\n"),
              std::string::npos);
    Evaluation skip_ev;
    const auto skipped =
        judge_dcgm(ran(dcgm_fixture("derived_dcgm3_r3_t400_skip.json")), policy(3), skip_ev);
    EXPECT_NE(render_dcgm_metrics(skipped, policy(3), {"n1", 1, 2})
                  .find("slurm_jail_gpu_check_dcgm_result{node=\"n1\",test=\"GPU Memory\","
                        "gpu=\"0\"} 3\n"),
              std::string::npos);
    const auto j = render_dcgm_json(o, policy(3));
    EXPECT_EQ(j["level"], 3);
    EXPECT_EQ(j["results"].size(), 8U);
    EXPECT_EQ(j["results"][3]["status"], "fail");
}

} // namespace
} // namespace sjh
