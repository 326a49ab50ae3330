// A command line's manual page and shell completions, generated from its CLI11 definition so that they list
// exactly the commands and options --help lists (installed by CMake: share/man/man1, bash and zsh completion).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace memplan::cli {

// The man(7) page of `app` ("memplan", "memplan-replay"), section 1.
// `summary`: the NAME line's few words.
std::string man_page(const CLI::App& app, const std::string& summary, const std::string& version);

// A bash completion script for `app` (a `complete -F` function; needs nothing beyond bash).
std::string bash_completion(const CLI::App& app);

// A zsh completion function for `app` (#compdef, _arguments per command).
std::string zsh_completion(const CLI::App& app);

}  // namespace memplan::cli
