// Telling memplan's inputs apart by their first bytes, so a file given in the wrong place gets a message that
// says what it is and what to do with it, instead of a parser's complaint.
#pragma once

#include <string>
#include <string_view>

namespace memplan {

enum class FileKind { kEmpty, kOnnxModel, kPlan, kOtherJson, kText, kBinary };

// An ONNX model is a protobuf whose first field is ir_version (tag byte 0x08); a plan is JSON with
// "format": "memplan.plan"; text is anything printable.
FileKind sniff_file_kind(std::string_view bytes);

// Throws Error(kBadInput) naming `path`, what it is and what to run on it, unless it is `wanted`.
// kText is accepted wherever text is wanted (CSV).
void expect_file_kind(std::string_view bytes, const std::string& path, FileKind wanted);

}  // namespace memplan
