// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/node/node_stamp.hpp"

#include "sjail/core/digest.hpp"
#include "sjail/core/fingerprint.hpp"

namespace sjail {

std::string namespace_stamp(const Config &config, const std::string &plugin_id, const FileId &jail,
                            const std::vector<SourceId> &sources, const std::string &gpu,
                            const std::string &node_proc) {
    std::string text = "plugin " + plugin_id + "\n";
    text += "settings " + fingerprint(config) + "\n";
    text += "jail " + file_id_text(jail) + "\n";
    for (const auto &source : sources) {
        text += "source " + source.path + " " + file_id_text(source.id) + " mnt " +
                std::to_string(source.mount_id) + "\n";
    }
    if (config.proc_options.empty()) {
        text += "node-proc " + node_proc + "\n";
    }
    return text + gpu;
}

std::string stamp_digest(std::string_view stamp) {
    Digest digest;
    digest.add(stamp);
    return digest.hex();
}

} // namespace sjail
