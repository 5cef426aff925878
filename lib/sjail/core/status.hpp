// SPDX-License-Identifier: Apache-2.0
// A tiny success-or-message result, shared by the jail library (core and sys) and its front ends.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace sjail {

// Empty message means success. Messages name the cause and, where there is one, the fix.
// [[nodiscard]]: a dropped error does not compile; drop one on purpose with (void).
class [[nodiscard]] Status {
  public:
    Status() = default;
    static Status failure(std::string message) { return Status(std::move(message)); }

    // "WHAT: <description of err>", for a failed system call.
    static Status from_errno(const std::string &what, int err = errno) {
        return Status(what + ": " + errno_text(err));
    }

    // The description of an errno value. strerrordesc_np reads no locale and
    // takes no lock, so it is also safe in a child forked from threads.
    static std::string errno_text(int err) {
        const char *text = ::strerrordesc_np(err);
        return text != nullptr ? text : "error " + std::to_string(err);
    }

    [[nodiscard]] bool ok() const { return message_.empty(); }
    [[nodiscard]] const std::string &message() const { return message_; }

  private:
    explicit Status(std::string message) : message_(std::move(message)) {}
    std::string message_;
};

} // namespace sjail
