#include "memplan/file_kind.h"

#include "memplan/error.h"

namespace memplan {

FileKind sniff_file_kind(std::string_view bytes) {
  size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return FileKind::kEmpty;
  if (bytes[first] == '{')
    return bytes.find("\"memplan.plan\"") != std::string_view::npos ? FileKind::kPlan : FileKind::kOtherJson;
  if (static_cast<unsigned char>(bytes[0]) == 0x08) return FileKind::kOnnxModel;
  for (size_t i = 0; i < bytes.size() && i < 512; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x09 || (c > 0x0d && c < 0x20)) return FileKind::kBinary;
  }
  return FileKind::kText;
}

void expect_file_kind(std::string_view bytes, const std::string& path, FileKind wanted) {
  FileKind got = sniff_file_kind(bytes);
  if (got == wanted || (wanted == FileKind::kOnnxModel && got == FileKind::kBinary)) return;
  const char* want = wanted == FileKind::kOnnxModel ? "an ONNX model (.onnx protobuf)"
                     : wanted == FileKind::kPlan    ? "a memplan plan (JSON)"
                                                    : "a MiniMalloc problem (CSV)";
  switch (got) {
    case FileKind::kEmpty:
      fail_input(path, std::string("the file is empty; expected ") + want);
    case FileKind::kOnnxModel:
      fail_input(path, std::string("this is an ONNX model, not ") + want + ": make a plan with 'memplan plan " + path +
                           " -o plan.json', or read the model with 'memplan inspect " + path + "'");
    case FileKind::kPlan:
      fail_input(path, std::string("this is a memplan plan (JSON), not ") + want + ": read it with 'memplan inspect " +
                           path + "', check it with 'memplan validate " + path + "'");
    case FileKind::kOtherJson:
      if (wanted == FileKind::kPlan) return;  // the plan reader names what is missing
      fail_input(path, std::string("this is a JSON file, not ") + want);
    case FileKind::kText:
      if (wanted == FileKind::kPlan) return;  // the JSON parser says where it stops
      fail_input(path, std::string("this is a text file, not ") + want);
    case FileKind::kBinary:
      fail_input(path, std::string("this is a binary file, not ") + want);
  }
}

}  // namespace memplan
