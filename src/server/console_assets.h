#pragma once

#include <cstddef>
#include <vector>

namespace strata::server {

/// One static file of the web console (web/console/), embedded in the binary at build time by
/// cmake/embed_console.cmake.
struct ConsoleAsset {
  const char* name;          ///< file name, e.g. "index.html"
  const char* content_type;  ///< e.g. "text/javascript; charset=utf-8"
  const unsigned char* data;
  size_t size;
};

/// Every embedded console file (generated source).
const std::vector<ConsoleAsset>& ConsoleAssets();

}  // namespace strata::server
