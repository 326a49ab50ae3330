// memplan completion bash|zsh, memplan manpage: shell completion and the manual page, made from the same
// definitions as --help (CMake installs their output).
#include <iostream>

#include "common.h"
#include "docs/app_docs.h"

namespace memplan::cli {

void register_docs(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  CLI::App* completion = app.add_subcommand(
      "completion", "Print a shell completion script: source it, or install it (the .deb does: bash, zsh)");
  completion->add_option("SHELL", *shell, "The shell")->required()->check(CLI::IsMember({"bash", "zsh"}));
  completion->footer(
      "Examples:\n"
      "  source <(memplan completion bash)\n"
      "  memplan completion zsh > ~/.zfunc/_memplan   # a folder on $fpath");
  const CLI::App* root = &app;
  completion->callback(
      [shell, root] { std::cout << (*shell == "bash" ? bash_completion(*root) : zsh_completion(*root)); });

  CLI::App* manpage = app.add_subcommand("manpage", "Print memplan's manual page (roff; 'man memplan' once installed)");
  manpage->footer("Example:\n  memplan manpage | man -l -");
  manpage->callback(
      [root] { std::cout << man_page(*root, "plan the memory of an ONNX model ahead of time", MEMPLAN_VERSION); });
}

}  // namespace memplan::cli
