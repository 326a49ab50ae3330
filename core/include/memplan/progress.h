// One status line on a terminal while a command works (the memplan executables ask for it: a program using memplan's
// libraries gets none unless it calls enable_progress_line()): the stage running (a TimedStage, stage_times.h) and its
// seconds so far, drawn in place on stderr once the stage has run a second and redrawn a few times a second, then
// cleared. Nothing is drawn where stderr is not a terminal (a CI log, a pipe), nor in an isolated child.
// MEMPLAN_PROGRESS=0 turns it off; MEMPLAN_PROGRESS=1 draws it anywhere, and MEMPLAN_PROGRESS_AFTER=SECONDS sets
// how long a stage runs before it is shown (for tests).
#pragma once

#include <mutex>
#include <string>

namespace memplan {

// Lets the status line be drawn in this process (where stderr is a terminal, or MEMPLAN_PROGRESS=1).
void enable_progress_line();

// The status line's text for stage `stage` after `seconds` ("" before the stage is shown).
std::string stage_progress_text(const std::string& stage, double seconds, double show_after_seconds = 1.0);

// Called by TimedStage as a stage begins and ends (stages may nest: the innermost is shown).
void progress_stage_began(const std::string& stage);
void progress_stage_ended();

// Draws `text` as the status line now (work with a progress of its own: the exact search); the stage line is not
// drawn over it for a second.
void show_progress_text(const std::string& text);

// Clears the status line, if one is drawn, and keeps it from being drawn again until the lock returned is released:
// held while writing anything else to stderr (a warning), so that the line is never drawn in the middle of it.
std::unique_lock<std::mutex> pause_progress_line();

}  // namespace memplan
