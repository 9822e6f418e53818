#pragma once

#include <httplib.h>

namespace strata::server {

/// GET /console/ and /console/{file}: the embedded web console (web/console/, see
/// console_assets.h). The files carry no data, so they are served without an API key; the
/// console sends the key the user types as x-api-key on its own requests. GET /console (no
/// slash) redirects to /console/ so that the page's relative module URLs resolve. Unknown files
/// are 404 JSON errors like every other route.
void HandleConsole(const httplib::Request& req, httplib::Response& res);

/// True for the paths HandleConsole serves (exempt from API keys): /console, /console/ and
/// /console/NAME where NAME has no '/', '%', '\' or "..".
bool IsConsolePath(std::string_view path);

}  // namespace strata::server
