// SPDX-License-Identifier: Apache-2.0
// Prometheus text format helpers shared by the metrics renderers (pure).
#pragma once

#include <string>
#include <string_view>

namespace sjh {

// A label value with '\', '"' and newlines escaped.
std::string prometheus_label(std::string_view v);

} // namespace sjh
