// memplan: plans the memory of an ONNX model ahead of time.
#include <string>
#include <vector>

#include "memplan/cli/run.h"

int main(int argc, char** argv) {
  return memplan::cli::run(std::vector<std::string>(argv + 1, argv + argc));
}
