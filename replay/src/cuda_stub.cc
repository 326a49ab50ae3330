// Built when CMake finds no CUDA: the CPU twin is all there is.
#include "device.h"
#include "memplan/error.h"

namespace memplan::replay {

bool cuda_available() {
  return false;
}

std::unique_ptr<Device> make_cuda_device() {
  throw Error(ExitCode::kUsage, "this memplan was built without CUDA; use --backend cpu, or build where nvcc is found");
}

}  // namespace memplan::replay
