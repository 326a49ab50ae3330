// One error type for every stage. It carries the context a user needs (which file, which node or
// value, what is wrong, what to do); only cli/ prints it and turns its kind into an exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace memplan {

// Exit codes, documented in the README and shared by every subcommand.
enum class ExitCode : int {
  kOk = 0,
  kBadInput = 1,     // model, config or plan invalid; file missing
  kUsage = 2,        // command-line usage error
  kInvalidPlan = 3,  // a plan failed validation or replay
  kOverBudget = 4,   // a budget was exceeded
};

// Visible outside libmemplan.so: library users catch it.
class __attribute__((visibility("default"))) Error : public std::runtime_error {
 public:
  Error(ExitCode code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// "FILE: what is wrong" — the shape of every bad-input message.
[[noreturn]] void fail_input(const std::string& file, const std::string& what);
[[noreturn]] void fail_usage(const std::string& what);

}  // namespace memplan
