// The routed pipelines of the configuration (a templated `table` or [[pipeline.route]]): a
// pipeline::Router over the real source, with one inner pipeline per table built by
// BuildPipeline (pipeline_factory.h) exactly as `ferry run` builds a one-table pipeline, from the
// pipeline's configuration with the route's table settings (docs/decisions/routing.md).
//
// Thread-safety: stateless functions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferry/app/pipeline_factory.h"
#include "ferry/base/result.h"
#include "ferry/config/config.h"
#include "ferry/metrics/metrics.h"
#include "ferry/pipeline/router.h"

namespace ferry::app {

// REQUIRES: config.routing. With options.check_only, validates the routes (their schemas,
// predicates and existing tables) and returns null.
Result<std::unique_ptr<pipeline::Router>> BuildRoutedPipeline(const config::PipelineConfig& config,
                                                              metrics::Registry* registry,
                                                              const BuildOptions& options = {});

// The configuration of one routed table: the pipeline's, with `table` and, for a static route,
// the route's schema, partitioning, derived columns, dedup and properties.
config::PipelineConfig RoutedTableConfig(const config::PipelineConfig& config,
                                         const std::string& table);

// The tables of a routed pipeline that have a log now, for `[pipeline.maintenance]`
// (maintenance_scheduler.h): the static routes' tables or the template's fallback, and every
// table the router recorded in its positions table when it first routed to it (open or closed
// since). REQUIRES: config.routing.
Result<std::vector<std::string>> RoutedTablesOf(const config::PipelineConfig& config);

}  // namespace ferry::app
