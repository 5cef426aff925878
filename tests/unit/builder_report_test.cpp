// SPDX-License-Identifier: Apache-2.0
// Every way a builder can end is judged; only an explicit, matching success
// token with exit status 0 is success.
#include "sjail/core/builder_report.hpp"

#include <gtest/gtest.h>

using sjail::BuilderEnd;
using sjail::FileId;
using sjail::judge_builder;

namespace {

const FileId kJail{2049, 131};

BuilderEnd exited(int code) {
    BuilderEnd end;
    end.code = code;
    return end;
}

BuilderEnd signaled(int sig) {
    BuilderEnd end;
    end.kind = BuilderEnd::Kind::Signaled;
    end.code = sig;
    return end;
}

std::string failure_of(std::string_view report, const BuilderEnd &end) {
    const auto s = judge_builder(report, end, kJail);
    EXPECT_FALSE(s.ok()) << "accepted: '" << report << "'";
    return s.message();
}

} // namespace

TEST(BuilderReport, SuccessTokenWithTheJailAsRootAndExitZero) {
    EXPECT_TRUE(judge_builder(sjail::builder_success_line(kJail), exited(0), kJail).ok());
}

TEST(BuilderReport, TheBuildersOwnErrorIsPassedOn) {
    const auto line = sjail::builder_failure_line("mount point /opt is missing\ninside");
    EXPECT_EQ(line.find('\n'), line.size() - 1);
    EXPECT_EQ(failure_of(line, exited(1)), "mount point /opt is missing inside");
}

TEST(BuilderReport, ABuilderThatReportsNothingIsRefused) {
    EXPECT_NE(
        failure_of("", exited(0)).find("reported no complete result and exited with status 0"),
        std::string::npos);
}

TEST(BuilderReport, ACrashedBuilderIsRefused) {
    EXPECT_NE(failure_of("", signaled(11)).find("killed by signal 11"), std::string::npos);
    // A crash after the token: the token alone is not enough.
    EXPECT_NE(failure_of(sjail::builder_success_line(kJail), signaled(9))
                  .find("reported success but was killed by signal 9"),
              std::string::npos);
}

TEST(BuilderReport, ANonZeroExitAfterTheTokenIsRefused) {
    EXPECT_NE(failure_of(sjail::builder_success_line(kJail), exited(3))
                  .find("reported success but exited with status 3"),
              std::string::npos);
}

TEST(BuilderReport, APivotThatDidNotHappenIsRefused) {
    const FileId host_root{2049, 2};
    EXPECT_NE(failure_of(sjail::builder_success_line(host_root), exited(0))
                  .find("pivot_root into the jail did not happen"),
              std::string::npos);
}

TEST(BuilderReport, ATruncatedOrGarbledReportIsRefused) {
    const std::string ok = sjail::builder_success_line(kJail);
    EXPECT_NE(failure_of(ok.substr(0, ok.size() - 1), exited(0)).find("no complete result"),
              std::string::npos);
    EXPECT_NE(failure_of("sjail-builder ok root=2049\n", exited(0)).find("not understood"),
              std::string::npos);
    EXPECT_NE(failure_of("sjail-builder ok root=2049:131x\n", exited(0)).find("not understood"),
              std::string::npos);
    EXPECT_NE(failure_of("hello\n", exited(0)).find("not understood"), std::string::npos);
    EXPECT_NE(failure_of(ok + ok, exited(0)).find("no complete result"), std::string::npos);
}

TEST(BuilderReport, ABuilderPastItsDeadlineIsRefusedWhateverItSaid) {
    BuilderEnd end;
    end.kind = BuilderEnd::Kind::TimedOut;
    end.timeout_s = 30;
    const auto message = failure_of(sjail::builder_success_line(kJail), end);
    EXPECT_NE(message.find("did not finish within 30 s"), std::string::npos);
    EXPECT_NE(message.find("build_timeout="), std::string::npos);
}
