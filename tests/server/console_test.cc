// The web console's static files (server/console.h): embedded, served at /console/ without an
// API key (they hold no data) while every API route still needs one.
#include "server/console.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "server/console_assets.h"
#include "server/http_server.h"

namespace strata::server {
namespace {

namespace fs = std::filesystem;

const ConsoleAsset* Find(const std::string& name) {
  for (const ConsoleAsset& a : ConsoleAssets()) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

TEST(ConsoleAssets, EveryPageModuleIsEmbeddedWithItsType) {
  for (const char* name : {"index.html", "app.js", "api.js", "arrow.js", "metrics.js", "query.js",
                           "ui.js", "versions.js", "style.css"}) {
    const ConsoleAsset* a = Find(name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_GT(a->size, 100u) << name;
  }
  EXPECT_EQ(std::string(Find("index.html")->content_type), "text/html; charset=utf-8");
  EXPECT_EQ(std::string(Find("app.js")->content_type), "text/javascript; charset=utf-8");
  EXPECT_EQ(std::string(Find("style.css")->content_type), "text/css; charset=utf-8");
  const ConsoleAsset* html = Find("index.html");
  const std::string text(reinterpret_cast<const char*>(html->data), html->size);
  EXPECT_NE(text.find("<script type=\"module\" src=\"app.js\">"), std::string::npos);
}

// Every `from "./x.js"` of an embedded module names an embedded file (a page module left out of
// the embedding would fail to load in the browser, and with it the whole console).
TEST(ConsoleAssets, EveryImportedModuleIsEmbedded) {
  std::vector<std::string> imported;
  for (const ConsoleAsset& a : ConsoleAssets()) {
    const std::string text(reinterpret_cast<const char*>(a.data), a.size);
    for (size_t pos = text.find("from \"./"); pos != std::string::npos;
         pos = text.find("from \"./", pos + 1)) {
      const size_t start = pos + 8;
      const size_t end = text.find('"', start);
      ASSERT_NE(end, std::string::npos) << a.name;
      imported.push_back(text.substr(start, end - start));
      EXPECT_NE(Find(imported.back()), nullptr) << a.name << " imports " << imported.back();
    }
  }
  // The modules the pages import, the versions page among them.
  for (const char* name :
       {"api.js", "arrow.js", "metrics.js", "query.js", "ui.js", "versions.js"}) {
    EXPECT_NE(std::find(imported.begin(), imported.end(), name), imported.end()) << name;
  }
  const ConsoleAsset* html = Find("index.html");
  const std::string nav(reinterpret_cast<const char*>(html->data), html->size);
  EXPECT_NE(nav.find("<a href=\"#/versions\" data-page=\"versions\">Versions</a>"),
            std::string::npos);
}

TEST(ConsolePath, OnlyTheConsoleIsExempt) {
  EXPECT_TRUE(IsConsolePath("/console"));
  EXPECT_TRUE(IsConsolePath("/console/"));
  EXPECT_TRUE(IsConsolePath("/console/app.js"));
  EXPECT_FALSE(IsConsolePath("/consoles"));
  EXPECT_FALSE(IsConsolePath("/v1/table/"));
  EXPECT_FALSE(IsConsolePath("/metrics"));
  EXPECT_FALSE(IsConsolePath("/console/../metrics"));
  EXPECT_FALSE(IsConsolePath("/console/a/b.js"));
  EXPECT_FALSE(IsConsolePath("/console/%2e%2e/metrics"));
}

class ConsoleServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata-console-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    ServerOptions o;
    o.data_dir = dir_.string();
    o.port = 0;
    o.threads = 2;
    o.api_keys = {"secret"};
    auto s = HttpServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ConsoleServerTest, StaticFilesWithoutKeyApiStillNeedsIt) {
  auto index = client_->Get("/console/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
  const ConsoleAsset* html = Find("index.html");
  EXPECT_EQ(index->body, std::string(reinterpret_cast<const char*>(html->data), html->size));

  auto js = client_->Get("/console/arrow.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js->body.size(), Find("arrow.js")->size);

  auto bare = client_->Get("/console");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->status, 301);
  EXPECT_EQ(bare->get_header_value("Location"), "/console/");

  auto missing = client_->Get("/console/nope.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(missing->body.find("no console file /console/nope.js"), std::string::npos);

  // Paths that could lead elsewhere are not exempt from the key.
  for (const char* path :
       {"/console/../metrics", "/console/a/../../metrics", "/console/%2e%2e/metrics"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 401) << path;
  }

  auto tables = client_->Get("/v1/table/");
  ASSERT_TRUE(tables);
  EXPECT_EQ(tables->status, 401);
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 401);
  auto keyed = client_->Get("/v1/table/", {{"x-api-key", "secret"}});
  ASSERT_TRUE(keyed);
  EXPECT_EQ(keyed->status, 200);
}

}  // namespace
}  // namespace strata::server
