// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/fingerprint.hpp"

#include "sjail/core/digest.hpp"
#include "sjail/core/settings.hpp"

namespace sjail {
namespace {

// The fingerprint's text, a piece at a time: the value of every setting that
// shapes the view, in the settings table's order.
void fingerprint_pieces(const Config &config, PieceSink &sink) {
    sink.add("v2");
    for (const auto &setting : settings()) {
        if (setting.shapes_view()) {
            sink.add(" ");
            sink.add(setting.name);
            sink.add("=");
            setting.show(config, sink);
        }
    }
}

class TextSink final : public PieceSink {
  public:
    explicit TextSink(std::string &out) : out_(out) {}
    void add(std::string_view piece) override { out_ += piece; }

  private:
    std::string &out_;
};

class DigestSink final : public PieceSink {
  public:
    explicit DigestSink(Digest &digest) : digest_(digest) {}
    void add(std::string_view piece) override { digest_.add(piece); }

  private:
    Digest &digest_;
};

} // namespace

std::string fingerprint(const Config &config) {
    std::string out;
    TextSink sink(out);
    fingerprint_pieces(config, sink);
    return out;
}

std::string fingerprint_digest(const Config &config) {
    Digest digest;
    DigestSink sink(digest);
    fingerprint_pieces(config, sink);
    return digest.hex();
}

} // namespace sjail
