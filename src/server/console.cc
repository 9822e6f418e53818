#include "server/console.h"

#include <string>
#include <string_view>

#include "server/console_assets.h"
#include "server/http_errors.h"
#include "server/request_context.h"

namespace strata::server {

bool IsConsolePath(std::string_view path) {
  if (path == "/console") return true;
  if (path.substr(0, 9) != "/console/") return false;
  // One plain file name: no sub-path, no dot-segment, no escapes, so that no other route can be
  // reached through a path the key check exempts.
  const std::string_view name = path.substr(9);
  return name.find_first_of("/%\\") == std::string_view::npos &&
         name.find("..") == std::string_view::npos;
}

void HandleConsole(const httplib::Request& req, httplib::Response& res) {
  const std::string_view path = RawPath(req);
  if (path == "/console") {
    res.status = 301;
    res.set_header("Location", "/console/");
    return;
  }
  std::string_view name = path.substr(9);
  if (name.empty()) name = "index.html";
  for (const ConsoleAsset& asset : ConsoleAssets()) {
    if (name == asset.name) {
      res.status = 200;
      res.set_content(reinterpret_cast<const char*>(asset.data), asset.size, asset.content_type);
      // The files change only with the binary; a restart with a new build must not keep old
      // modules, so the browser revalidates (cheap: a few kilobytes, same origin).
      res.set_header("Cache-Control", "no-cache");
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("X-Frame-Options", "DENY");
      return;
    }
  }
  SendError(res, 404, "not_found", "no console file " + std::string(path));
}

}  // namespace strata::server
