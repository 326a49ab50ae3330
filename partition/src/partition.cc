#include "memplan/partition/partition.h"

#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "memplan/error.h"
#include "memplan/execution_order.h"
#include "memplan/json_input.h"
#include "memplan/text_escape.h"

namespace memplan::partition {
namespace {

Partition finish(Partition p, const Graph& graph, const std::vector<NodeId>& order) {
  std::vector<std::vector<NodeId>> streams(p.stream_device.size());
  for (NodeId n : order) streams[p.node_stream[n]].push_back(n);
  p.streams = std::move(streams);
  (void)graph;
  return p;
}

}  // namespace

Partition default_partition(const Graph& graph, const Placement& placement, const std::vector<NodeId>& order) {
  Partition p;
  p.node_stream.assign(graph.nodes.size(), -1);
  std::map<DeviceType, int> stream_of;
  for (NodeId n : order) {
    Device d = placement.node_device[n];
    auto [it, inserted] = stream_of.emplace(d.type, static_cast<int>(p.stream_device.size()));
    if (inserted) p.stream_device.push_back(d);
    p.node_stream[n] = it->second;
  }
  return finish(std::move(p), graph, order);
}

PartitionConfig parse_partition_config(const std::string& text, const std::string& source) {
  nlohmann::json j = parse_json_input(text, source);
  if (!j.is_object()) fail_input(source, "a partition config must be a JSON object");
  if (!j.contains("type")) fail_input(source, "missing \"type\"; expected \"type\": \"DeviceBasedPartitioner\"");
  if (!j["type"].is_string() || j["type"] != "DeviceBasedPartitioner")
    fail_input(source,
               "\"type\" is " + json_excerpt(j["type"]) + "; the only partitioner is \"DeviceBasedPartitioner\"");
  PartitionConfig c;
  // ORT writes only the type for a graph without nodes.
  if (!j.contains("streams") && !j.contains("devices")) return c;
  if (!j.contains("streams") || !j["streams"].is_array())
    fail_input(source, "missing \"streams\": expected an array of arrays of node names");
  if (!j.contains("devices") || !j["devices"].is_array())
    fail_input(source, "missing \"devices\": expected one device type per stream, e.g. [\"0\", \"1\"]");
  for (size_t s = 0; s < j["streams"].size(); ++s) {
    const auto& stream = j["streams"][s];
    if (!stream.is_array()) fail_input(source, "streams[" + std::to_string(s) + "] is not an array of node names");
    std::vector<std::string> names;
    for (const auto& name : stream) {
      if (!name.is_string())
        fail_input(source, "streams[" + std::to_string(s) + "] holds " + json_excerpt(name) + ", not a node name");
      names.push_back(name.get<std::string>());
    }
    c.streams.push_back(std::move(names));
  }
  for (size_t d = 0; d < j["devices"].size(); ++d) {
    const auto& dev = j["devices"][d];
    std::string text_value = dev.is_string() ? dev.get<std::string>() : json_excerpt(dev);
    if (!dev.is_string() || (text_value != "0" && text_value != "1" && text_value != "2" && text_value != "3"))
      fail_input(source, "devices[" + std::to_string(d) + "] is " + json_excerpt(dev) +
                             "; expected a device type \"0\" (CPU), \"1\" (GPU), \"2\" (FPGA) or \"3\" (NPU)");
    c.devices.push_back(text_value);
  }
  if (c.streams.size() != c.devices.size())
    fail_input(source, "has " + std::to_string(c.streams.size()) + " streams but " + std::to_string(c.devices.size()) +
                           " devices; the counts must match (ORT: \"Number of streams does not equal to number of "
                           "device types\")");
  return c;
}

Partition apply_partition_config(const Graph& graph, const Placement& placement, const std::vector<NodeId>& order,
                                 const PartitionConfig& config, const std::string& source,
                                 std::vector<std::string>& warnings) {
  auto names = ort_node_names(graph, default_order(graph));
  std::unordered_map<std::string, NodeId> by_name;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.nodes.size()); ++n) by_name.emplace(names[n], n);

  Partition p;
  p.node_stream.assign(graph.nodes.size(), -1);
  std::vector<std::string> unknown;
  for (size_t s = 0; s < config.streams.size(); ++s) {
    DeviceType type = static_cast<DeviceType>(std::stoi(config.devices[s]));
    p.stream_device.push_back(Device{type, 0});
    for (const auto& name : config.streams[s]) {
      auto it = by_name.find(name);
      if (it == by_name.end()) {
        unknown.push_back(name);
        continue;
      }
      NodeId n = it->second;
      if (p.node_stream[n] != -1 && p.node_stream[n] != static_cast<int>(s))
        fail_input(source, "node '" + name + "' is in stream " + std::to_string(p.node_stream[n]) + " and stream " +
                               std::to_string(s) + "; each node belongs to exactly one stream");
      Device placed = placement.node_device[n];
      if (placed.type != type)
        fail_input(source, "node '" + name + "' is placed on " + device_name(placed) + " but stream " +
                               std::to_string(s) + " is on device type " + config.devices[s] +
                               "; put it in a stream of device type " + std::to_string(static_cast<int>(placed.type)));
      p.stream_device.back().id = placed.id;
      p.node_stream[n] = static_cast<int>(s);
    }
  }
  for (NodeId n : order)
    if (p.node_stream[n] == -1)
      fail_input(source,
                 "node '" + names[n] + "' (" + graph.nodes[n].op_type +
                     ") is in no stream; every node of the graph must be listed (ORT: \"Failed to find node\")");
  if (!unknown.empty()) {
    std::string list;
    for (size_t i = 0; i < unknown.size() && i < 10; ++i) list += (i ? ", " : "") + ("'" + unknown[i] + "'");
    if (unknown.size() > 10) list += ", ... (" + std::to_string(unknown.size() - 10) + " more)";
    warnings.push_back(source + ": " + std::to_string(unknown.size()) +
                       " name(s) match no node and are ignored: " + list);
  }
  return finish(std::move(p), graph, order);
}

std::string write_partition_config(const Graph& graph, const Partition& partition) {
  auto names = ort_node_names(graph, default_order(graph));
  // nlohmann::json keeps object keys sorted, as ORT's writer (also nlohmann) does.
  nlohmann::json j;
  j["type"] = "DeviceBasedPartitioner";
  if (partition.streams.empty()) return dump_json(j);  // as ORT writes it for a graph without nodes
  j["streams"] = nlohmann::json::array();
  j["devices"] = nlohmann::json::array();
  for (size_t s = 0; s < partition.streams.size(); ++s) {
    nlohmann::json stream = nlohmann::json::array();
    for (NodeId n : partition.streams[s]) stream.push_back(names[n]);
    j["streams"].push_back(stream);
    j["devices"].push_back(std::to_string(static_cast<int>(partition.stream_device[s].type)));
  }
  return dump_json(j);
}

}  // namespace memplan::partition
