// SPDX-License-Identifier: Apache-2.0
#include "gate_file.hpp"
#include "test_util.hpp"

#include <fstream>
#include <sys/stat.h>

namespace sjh {
namespace {

TEST(GateFile, EachCheckWritesItsOwnRootOnlyRecord) {
    test::TempDir dir;
    const auto d = (dir.path() / "health").string();
    EXPECT_FALSE(read_gate_records(d, "n1").gpu); // no directory yet: no pass
    const GatePass pass{make_identity("boot-a", {"2", "1"}), 1700000000};
    write_gate_pass(d, "n1", "gpu", pass);
    const auto r = read_gate_records(d, "n1");
    ASSERT_TRUE(r.gpu);
    EXPECT_EQ(r.gpu->identity, pass.identity);
    EXPECT_FALSE(r.nccl);
    EXPECT_FALSE(read_gate_records(d, "n2").gpu); // per node
    struct stat st {};
    ASSERT_EQ(::stat(gate_record_path(d, "n1", "gpu").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600U);
}

TEST(GateFile, ACorruptRecordIsAnErrorNamingTheFileAndTheFix) {
    test::TempDir dir;
    const auto d = dir.path().string();
    std::ofstream(gate_record_path(d, "n1", "nccl")) << "{\"check\": \"gpu\"}";
    try {
        (void)read_gate_records(d, "n1");
        FAIL() << "no error";
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find(gate_record_path(d, "n1", "nccl")), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("delete it"), std::string::npos);
    }
}

TEST(GateFile, TheBootIdIsOneLineAndAMissingOneNamesTheOption) {
    test::TempDir dir;
    const auto path = (dir.path() / "boot_id").string();
    std::ofstream(path) << "0b5e2c6a-1c0f-4a57-9d35-3c1e0e2f4a11\n";
    EXPECT_EQ(read_boot_id(path), "0b5e2c6a-1c0f-4a57-9d35-3c1e0e2f4a11");
    std::ofstream(path) << "\n";
    EXPECT_THROW((void)read_boot_id(path), std::runtime_error);
    try {
        (void)read_boot_id((dir.path() / "missing").string());
        FAIL() << "no error";
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find("--boot-id-file"), std::string::npos);
    }
}

} // namespace
} // namespace sjh
