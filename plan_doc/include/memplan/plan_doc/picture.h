// Pictures of where a plan's memory goes, for a person deciding what to change.
//
// The SVG: the device totals at the top; one lane per stream showing which steps it runs; one panel per
// arena, largest first, with height in proportion to its size (x = execution step labelled with node names,
// y = offset labelled in bytes, a rectangle per value named when it is large enough, the peak marked) and,
// beside each activation panel, what is live at the peak by op type and by layer prefix; weights as one
// compact bar, since they live for the whole run. The HTML page adds a summary, and a value table (largest
// first, filterable, sizes readable) whose rows highlight their rectangle on hover.
#pragma once

#include <string>

#include "memplan/plan_doc/insight.h"
#include "memplan/plan_doc/plan_doc.h"

namespace memplan::plan_doc {

std::string render_svg(const PlanDoc& plan, const PlanInsight& insight);
std::string render_html(const PlanDoc& plan, const PlanInsight& insight);

}  // namespace memplan::plan_doc
