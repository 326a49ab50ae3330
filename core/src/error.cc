#include "memplan/error.h"

namespace memplan {

void fail_input(const std::string& file, const std::string& what) {
  throw Error(ExitCode::kBadInput, file.empty() ? what : file + ": " + what);
}

void fail_usage(const std::string& what) {
  throw Error(ExitCode::kUsage, what);
}

}  // namespace memplan
