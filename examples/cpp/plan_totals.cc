// Plans a model with memplan's library and prints what each device needs, then checks the plan.
// usage: plan_totals MODEL.onnx [NAME=VALUE ...]   (free dimensions, as memplan plan --dim)
#include <memplan/memplan.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx [NAME=VALUE ...]\n", argv[0]);
    return 2;
  }
  memplan::PlanSettings settings;
  for (int i = 2; i < argc; ++i) {
    const std::string dim = argv[i];
    const size_t eq = dim.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "%s: expected NAME=VALUE\n", argv[i]);
      return 2;
    }
    settings.shapes.dims[dim.substr(0, eq)] = std::stoll(dim.substr(eq + 1));
  }
  try {
    const memplan::PlanResult plan = memplan::make_plan(argv[1], settings);
    std::printf("memplan %s: %zu nodes, %zu values\n", memplan::version().c_str(), plan.nodes, plan.values);
    for (const auto& d : plan.devices)
      std::printf("%s needs %llu bytes (activations %llu, weights %llu)\n", d.device.c_str(),
                  static_cast<unsigned long long>(d.total), static_cast<unsigned long long>(d.activations),
                  static_cast<unsigned long long>(d.weights));
    const memplan::Validation check = memplan::check_plan(plan.json, "plan", {argv[1], false});
    std::printf("plan %s (%zu values checked)\n", check.valid() ? "valid" : "INVALID", check.values_checked);
    return check.valid() ? 0 : 3;
  } catch (const memplan::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return static_cast<int>(e.code());
  }
}
