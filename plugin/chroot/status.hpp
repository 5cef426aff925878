// A tiny success-or-message result, shared by the plugin's pure and system layers.
#pragma once

#include <string>
#include <utility>

namespace sjail {

// Empty message means success. Messages name the cause and, where there is one, the fix.
class Status {
  public:
    Status() = default;
    static Status failure(std::string message) { return Status(std::move(message)); }

    [[nodiscard]] bool ok() const { return message_.empty(); }
    [[nodiscard]] const std::string &message() const { return message_; }

  private:
    explicit Status(std::string message) : message_(std::move(message)) {}
    std::string message_;
};

} // namespace sjail
