// Numbered parts of one output made on several threads and handed on in order: a large plan's text is made in
// parts of a few MB (nodes and values in runs) by two threads, and each part goes to the file as soon as every
// part before it has, so that the text in memory at any time is a few parts, not the half of the file that one
// thread would otherwise make while the other writes the first half.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace memplan {

// Calls make(i) for i = 0..count-1 on `threads` threads (this one and threads - 1 more) and out() with each result
// in order of i, never from two threads at once. A thread takes part i only while fewer than `ahead` parts before
// it wait to go out. The first exception from make or out stops every thread and is rethrown here; out() is not
// called after it. While `helpers_pause()` is true (asked every few ms), only the calling thread takes parts: the
// others leave the cores to work elsewhere that the parts wait for.
void make_parts_in_order(size_t count, int threads, size_t ahead, const std::function<std::string(size_t)>& make,
                         const std::function<void(std::string&)>& out, const std::function<bool()>& helpers_pause = {});

}  // namespace memplan
