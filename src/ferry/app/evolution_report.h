// The part of `ferry config check` that explains, for a pipeline whose table exists, what its
// `schema_evolution` setting will do to that table: which fields may become columns and within
// what limits, which columns may widen and to what, what the first widening does to the protocol,
// and what never changes (docs/transform.md "Schema evolution").
//
// Thread-safety: stateless functions.
#pragma once

#include <string>

#include "ferry/config/config.h"
#include "ferry/delta/snapshot.h"

namespace ferry::app {

// Lines of text (each ends with '\n'), for the pipeline `config` and its table's latest snapshot.
std::string ExplainSchemaEvolution(const config::PipelineConfig& config,
                                   const delta::Snapshot& table);

}  // namespace ferry::app
