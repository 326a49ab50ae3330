// memplan-replay: the replay harness alone, for machines that have a GPU but none of memplan's build
// dependencies. Exit codes as memplan's: 0 clean, 1 bad input, 2 usage, 3 the plan failed.
#include <cstring>

#include "docs/app_docs.h"
#include "memplan/progress.h"
#include "replay_cli.h"

int main(int argc, char** argv) {
  using namespace memplan;
  CLI::App app{
      "memplan-replay: execute a memplan plan with stamp kernels and report every buffer read that does not "
      "hold its producer's stamp.\nExit codes: 0 clean, 1 bad input, 2 usage error (or no usable GPU for --backend "
      "cuda), 3 the replay found errors.",
      "memplan-replay"};
  auto args = std::make_shared<replay::ReplayArgs>();
  replay::add_replay_options(app, args);
  // The build makes the manual page and completions from the app itself (not listed in --help).
  if (argc == 2 && std::strcmp(argv[1], "--manpage") == 0) {
    std::cout << cli::man_page(app, "execute a memplan plan and check that no buffer is overwritten early",
                               MEMPLAN_VERSION);
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "--completion") == 0) {
    const std::string shell = argv[2];
    if (shell != "bash" && shell != "zsh") return static_cast<int>(ExitCode::kUsage);
    std::cout << (shell == "bash" ? cli::bash_completion(app) : cli::zsh_completion(app));
    return 0;
  }
  enable_progress_line();
  try {
    app.parse(argc, argv);
    replay::run_replay(*args);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  } catch (const Error& e) {
    std::cerr << "memplan-replay: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "memplan-replay: error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kBadInput);
  }
  return 0;
}
