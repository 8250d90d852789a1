// The status page's files (index.html, status.css, status.js and the JSON Schema of
// /api/status), embedded in the binary at build time: embed_assets.cmake turns the files of this
// folder into the generated status_assets.cc. ferry serves them itself; the page loads nothing
// from anywhere else.
//
// Thread-safety: immutable data.
#pragma once

#include <span>
#include <string_view>

namespace ferry::app {

struct StatusAsset {
  std::string_view path;  // "/status.js"
  std::string_view content_type;
  std::string_view body;
};

std::span<const StatusAsset> StatusAssets();

}  // namespace ferry::app
