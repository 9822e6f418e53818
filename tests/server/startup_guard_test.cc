// What stops a second server from sharing a running one's port or data directory (issue 18,
// "the first hour of a new user"): the listener binds without SO_REUSEPORT, so a taken port
// is a startup error naming it; the data directory lock (server/data_dir_lock.h) makes a
// second server on the same directory fail naming the holder's pid, before it touches (and
// fences) any table; the lock is released when the holder goes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "server/data_dir_lock.h"
#include "server/http_listener.h"
#include "server/http_server.h"

namespace strata::server {
namespace {

namespace fs = std::filesystem;

class StartupGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("strata-guard-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ServerOptions Options(const fs::path& data, int port) const {
    ServerOptions o;
    o.data_dir = data.string();
    o.host = "127.0.0.1";
    o.port = port;
    o.threads = 2;
    o.log_level = "warn";
    return o;
  }

  static std::string ReadFile(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST_F(StartupGuardTest, ASecondListenerOnATakenPortFailsNamingThePort) {
  HttpListener first;
  ListenerOptions lo;
  lo.port = 0;
  lo.workers = 1;
  Result<int> port = first.Start(lo);
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  ASSERT_GT(*port, 0);

  HttpListener second;
  lo.port = *port;
  Result<int> again = second.Start(lo);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kIOError);
  EXPECT_EQ(again.status().message(),
            "port " + std::to_string(*port) +
                " on 127.0.0.1 is already in use (another strata serve or another program "
                "listens there): stop it or choose another --port");

  // 0.0.0.0 covers 127.0.0.1: taken as well.
  HttpListener any;
  lo.host = "0.0.0.0";
  Result<int> wildcard = any.Bind(lo);
  ASSERT_FALSE(wildcard.ok());
  EXPECT_NE(wildcard.status().message().find("port " + std::to_string(*port) +
                                             " on 0.0.0.0 is already in use"),
            std::string::npos)
      << wildcard.status().ToString();

  // No SO_REUSEPORT on the listening socket: a socket that asks for it cannot join the port
  // (with it on both, the kernel would split the connections between the two).
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  const int yes = 1;
  ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &yes, sizeof(yes)), 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(*port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int err = errno;
  EXPECT_NE(rc, 0);
  EXPECT_EQ(err, EADDRINUSE);
  ::close(fd);
}

TEST_F(StartupGuardTest, AnUnresolvableOrForeignHostIsNamed) {
  HttpListener l;
  ListenerOptions lo;
  lo.host = "192.0.2.1";  // TEST-NET-1: not an address of this machine
  lo.port = 0;
  Result<int> r = l.Bind(lo);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "cannot listen on port 0 on 192.0.2.1: --host '192.0.2.1' is not an address of "
            "this machine");
}

TEST_F(StartupGuardTest, DataDirLockIsExclusiveAndNamesTheHolder) {
  const fs::path data = dir_ / "data";  // created by Acquire
  Result<std::unique_ptr<DataDirLock>> lock = DataDirLock::Acquire(data.string());
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  const fs::path file = data / "~strata.lock";
  EXPECT_EQ((*lock)->path(), file.string());
  EXPECT_EQ(ReadFile(file), "pid " + std::to_string(::getpid()) + "\n");

  // A second lock (another open file description: flock conflicts as with another process).
  Result<std::unique_ptr<DataDirLock>> second = DataDirLock::Acquire(data.string());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(second.status().message(),
            "data directory " + data.string() + " is in use by another strata server (pid " +
                std::to_string(::getpid()) + ", lock file " + file.string() +
                "): stop it, or give this server another --data");

  // Released with its holder; the file (and its stale pid) stays and means nothing.
  lock->reset();
  EXPECT_TRUE(fs::exists(file));
  std::ofstream(file, std::ios::trunc) << "pid 999999999\n";
  Result<std::unique_ptr<DataDirLock>> third = DataDirLock::Acquire(data.string());
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(ReadFile(file), "pid " + std::to_string(::getpid()) + "\n");
}

TEST_F(StartupGuardTest, ASecondServerOnTheSameDataDirectoryDoesNotStart) {
  auto first = HttpServer::Start(Options(dir_, 0));
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  auto second = HttpServer::Start(Options(dir_, 0));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(second.status().message().find("is in use by another strata server (pid " +
                                           std::to_string(::getpid())),
            std::string::npos)
      << second.status().ToString();

  // Without the lock (tests of fencing) it starts.
  ServerOptions unlocked = Options(dir_, 0);
  unlocked.lock_data_dir = false;
  auto third = HttpServer::Start(unlocked);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  third->reset();

  // Once the first one stops, the directory is free.
  first->reset();
  auto fourth = HttpServer::Start(Options(dir_, 0));
  ASSERT_TRUE(fourth.ok()) << fourth.status().ToString();
}

TEST_F(StartupGuardTest, ASecondServerOnATakenPortFailsBeforeTouchingItsData) {
  auto first = HttpServer::Start(Options(dir_ / "a", 0));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const int port = (*first)->port();

  auto second = HttpServer::Start(Options(dir_ / "b", port));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kIOError);
  EXPECT_EQ(second.status().message(),
            "port " + std::to_string(port) +
                " on 127.0.0.1 is already in use (another strata serve or another program "
                "listens there): stop it or choose another --port");
  // Its directory lock went with it: a server on "b" starts.
  auto third = HttpServer::Start(Options(dir_ / "b", 0));
  ASSERT_TRUE(third.ok()) << third.status().ToString();
}

}  // namespace
}  // namespace strata::server
