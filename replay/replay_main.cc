// memplan-replay: the replay harness alone, for machines that have a GPU but none of memplan's build
// dependencies. Exit codes as memplan's: 0 clean, 1 bad input, 2 usage, 3 the plan failed.
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
