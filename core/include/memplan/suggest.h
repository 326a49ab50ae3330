// "Did you mean ...?" for names typed by a user: subcommands, options, --dim names, devices.
#pragma once

#include <string>
#include <vector>

namespace memplan {

// The candidate closest to `word` by edit distance (case-insensitive), if it is close enough to be a
// plausible typo or `word` is a prefix of it; "" otherwise. Ties go to the earlier candidate.
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

// " Did you mean 'x'?" or "" when nothing is close.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace memplan
