// SPDX-License-Identifier: Apache-2.0
// Which node file runs as ldconfig: the ELF program, Ubuntu's wrapper never.
#include "sjail/core/gpu/ldconfig_program.hpp"

#include <gtest/gtest.h>

using sjail::ProgramKind;

TEST(LdconfigProgram, TheConfiguredFileFirstThenItsRealProgramBesideIt) {
    EXPECT_EQ(sjail::ldconfig_candidates("/sbin/ldconfig"),
              (std::vector<std::string>{"/sbin/ldconfig", "/sbin/ldconfig.real"}));
}

TEST(LdconfigProgram, AFileIsAnElfProgramAScriptOrNeither) {
    EXPECT_EQ(sjail::program_kind(std::string("\x7f"
                                              "ELF\x02\x01\x01",
                                              7)),
              ProgramKind::Elf);
    EXPECT_EQ(sjail::program_kind("#!/bin/sh\n"), ProgramKind::Script);
    EXPECT_EQ(sjail::program_kind("#"), ProgramKind::Other);
    EXPECT_EQ(sjail::program_kind("\x7f"
                                  "EL"),
              ProgramKind::Other);
    EXPECT_EQ(sjail::program_kind(""), ProgramKind::Other);
    EXPECT_EQ(sjail::program_kind("MZ\x90"), ProgramKind::Other);
}

TEST(LdconfigProgram, TheMessageNamesTheScriptTheMissingProgramAndTheFix) {
    const auto wrapped = sjail::no_ldconfig_program_message("/sbin/ldconfig", "/usr/sbin/ldconfig");
    EXPECT_NE(wrapped.find("/usr/sbin/ldconfig is a script"), std::string::npos) << wrapped;
    EXPECT_NE(wrapped.find("/sbin/ldconfig.real"), std::string::npos) << wrapped;
    EXPECT_NE(wrapped.find("apt-get install --reinstall libc-bin"), std::string::npos) << wrapped;
    const auto neither = sjail::no_ldconfig_program_message("/sbin/ldconfig", "");
    EXPECT_NE(neither.find("is not an ELF program, and neither is /sbin/ldconfig.real"),
              std::string::npos)
        << neither;
}
