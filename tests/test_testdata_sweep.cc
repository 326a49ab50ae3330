// Loads every model of ONNX's own backend test data (Debian's libonnx-testdata): each loads into a
// graph view or fails with a clear bad-input error; nothing crashes or throws anything else.
#include <catch2/catch.hpp>
#include <filesystem>
#include <iostream>
#include <map>

#include "memplan/error.h"
#include "memplan/execution_order.h"
#include "memplan/onnx_io/load.h"

using namespace memplan;
namespace fs = std::filesystem;

TEST_CASE("every libonnx-testdata model loads or fails cleanly", "[sweep]") {
  REQUIRE(fs::is_directory(MEMPLAN_TESTDATA_DIR));
  std::vector<std::string> models;
  for (const auto& entry : fs::recursive_directory_iterator(MEMPLAN_TESTDATA_DIR))
    if (entry.is_regular_file() && entry.path().extension() == ".onnx") models.push_back(entry.path().string());
  std::sort(models.begin(), models.end());

  size_t loaded = 0, nodes = 0, subgraphs = 0, unknown = 0;
  std::map<std::string, std::string> failures;
  for (const auto& path : models) {
    try {
      Model m = onnx_io::load_model(path);
      ++loaded;
      nodes += m.graph.nodes.size();
      subgraphs += m.graph.total_subgraph_count();
      // Every loaded graph has a complete execution order.
      CHECK(default_order(m.graph).size() == m.graph.nodes.size());
      for (const Value& v : m.graph.values)
        if (v.is_tensor() && !v.bytes) ++unknown;
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::kBadInput);
      CHECK_THAT(e.what(), Catch::StartsWith(path));
      failures[path] = e.what();
    }
  }
  std::cout << "libonnx-testdata sweep: " << models.size() << " models, " << loaded << " loaded (" << nodes
            << " nodes, " << subgraphs << " subgraphs, " << unknown << " tensors of unknown size), " << failures.size()
            << " rejected\n";
  for (const auto& [path, why] : failures) std::cout << "  rejected: " << why << "\n";

  CHECK(models.size() == 1072);
  CHECK(loaded + failures.size() == models.size());
  CHECK(failures.size() == 0);
}
