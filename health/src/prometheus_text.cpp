// SPDX-License-Identifier: Apache-2.0
#include "prometheus_text.hpp"

namespace sjh {

std::string prometheus_label(std::string_view v) {
    std::string out;
    for (const char c : v) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

} // namespace sjh
