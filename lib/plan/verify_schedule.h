// Checks a finished schedule before anyone emits or runs it (a planner bug
// caught here is an internal error naming the launch and buffer):
//  - every buffer a launch names exists; views resolve within their storage
//    and keep its element type;
//  - every activation a launch reads (through any view) was written by an
//    earlier launch: the schedule's order is executable;
//  - int8 forms are read only by int8 GEMVs and written before they are read;
//  - GEMV parts share one k and one format, at most 4 parts, rows_per_warp
//    in {1, 2, 4}, split_k in 1..16; a row-loop GEMV is one matrix at
//    split 1 whose chunks a lane the kernel takes; rope parts at most 2;
//  - the launch just before an attention writes neither its position nor
//    its caches other than as the row at that position (attention reads
//    both before its wait); the launch just before a rope does not write
//    its position (rope reads it before its wait); with early triggers
//    (rule early_trigger), the same of every launch that may still run
//    when one starts; only norm, quantize, int8 SwiGLU and rope launches
//    trigger early (their kernels have the form).
#pragma once

#include <optional>
#include <string>

#include "lib/plan/schedule.h"

namespace lanec {

void verify_schedule(const Schedule& schedule);

// What `reader` reads before its wait that `running` (a launch that may
// still run when `reader` starts) writes, as "running writes ..."; nullopt
// when nothing (kernels other than attention and rope read only constants
// before their wait).
std::optional<std::string> early_read_clash(const Schedule& s, const Launch& running, const Launch& reader);

// The same over the launches that may still run when `reader` starts, if it
// starts once launch from - 1 has triggered: launch from - 1, and back from
// it while the launches trigger early (early_trigger: at their start, so the
// one before may still run too). The first clash, or nullopt.
std::optional<std::string> early_read_clash_before(const Schedule& s, const Launch& reader, size_t from);

}  // namespace lanec
