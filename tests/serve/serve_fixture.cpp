#include "serve_fixture.hpp"

#include <csignal>
#include <cstdlib>
#include <fstream>

#include "batchai/common/clock.hpp"
#include "batchai/common/ids.hpp"

namespace batchai::serve {

namespace fs = std::filesystem;

ExeLauncher::ExeLauncher() : inner_(make_posix_process_launcher()), self_(self_executable().string()) {}
pid_t ExeLauncher::spawn(const ProcessSpec& spec) { return inner_->spawn(fix(spec)); }
std::optional<ProcessExit> ExeLauncher::wait(pid_t pid, std::optional<std::chrono::milliseconds> timeout) {
  return inner_->wait(pid, timeout);
}
bool ExeLauncher::signal_group(pid_t pgid, int signal) { return inner_->signal_group(pgid, signal); }
pid_t ExeLauncher::spawn_detached(const ProcessSpec& spec) { return inner_->spawn_detached(fix(spec)); }
ProcessSpec ExeLauncher::fix(ProcessSpec spec) const {
  if (!spec.argv.empty() && spec.argv[0] == self_) spec.argv[0] = BATCHAI_EXE;
  return spec;
}

void ServeTest::SetUp() {
  home_ = make_temp_dir("batchai-serve-test");
  ::setenv("BATCHAI_HOME", home_.c_str(), 1);
  ::setenv("BATCHAI_SIM_DELAY_S", "0", 1);
  start_server();
}

void ServeTest::TearDown() {
  stop_server();
  // Jobs' supervisors may still be writing: retry the removal briefly.
  std::error_code ec;
  for (int i = 0; i < 50 && fs::exists(home_); ++i) {
    fs::remove_all(home_, ec);
    if (fs::exists(home_)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void ServeTest::start_server(const std::function<void(ServerConfig&)>& adjust) {
  ServerConfig config;
  config.settings = control_plane::Settings::from_environment();
  config.services = control_plane::Services{make_process_clock(), std::make_shared<ExeLauncher>()};
  config.port = 0;
  if (adjust) adjust(config);
  server_ = std::make_unique<Server>(std::move(config));
  thread_ = std::thread([this] { server_->run(); });
}

void ServeTest::stop_server() {
  if (!server_) return;
  server_->stop();
  thread_.join();
  server_.reset();
}

std::unique_ptr<httplib::SSLClient> ServeTest::client() {
  auto c = std::make_unique<httplib::SSLClient>("localhost", server_->port());
  c->set_ca_cert_path(server_->certificate().c_str());
  c->enable_server_certificate_verification(true);
  c->set_read_timeout(60, 0);
  return c;
}

std::string ServeTest::token() {
  auto c = client();
  const Identity& id = server_->identity();
  auto r = c->Post("/adfs/oauth2/token",
                   "client_id=" + id.client_id + "&grant_type=client_credentials&client_secret=" + id.client_secret +
                       "&scope=https%3A%2F%2Flocalhost%3A" + std::to_string(server_->port()) + "%2F%2F.default",
                   "application/x-www-form-urlencoded");
  EXPECT_TRUE(r);
  if (!r) return "";
  EXPECT_EQ(r->status, 200) << r->body;
  return Json::parse(r->body)["access_token"].get<std::string>();
}

httplib::Headers ServeTest::auth() {
  if (token_.empty()) token_ = token();
  return {{"Authorization", "Bearer " + token_}};
}

httplib::Result ServeTest::call(const std::string& method, const std::string& path, const std::string& body) {
  auto c = client();
  if (method == "GET") return c->Get(path.c_str(), auth());
  if (method == "HEAD") return c->Head(path.c_str(), auth());
  if (method == "DELETE") return c->Delete(path.c_str(), auth());
  if (method == "PUT") return c->Put(path.c_str(), auth(), body, "application/json");
  if (method == "PATCH") return c->Patch(path.c_str(), auth(), body, "application/json");
  return c->Post(path.c_str(), auth(), body, "application/json");
}

Json ServeTest::expect(const std::string& method, const std::string& path, int status, const std::string& body) {
  auto r = call(method, path, body);
  EXPECT_TRUE(r) << method << " " << path;
  if (!r) return nullptr;
  EXPECT_EQ(r->status, status) << method << " " << path << ": " << r->body;
  return r->body.empty() ? Json(nullptr) : Json::parse(r->body, nullptr, false);
}

void ServeTest::follow(const httplib::Result& r) {
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 202) << r->body;
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  const std::string base = "https://localhost:" + std::to_string(server_->port());
  std::string location = r->get_header_value("Location");
  ASSERT_EQ(location.rfind(base, 0), 0u) << location;
  std::string async = r->get_header_value("Azure-AsyncOperation");
  if (!async.empty()) {
    ASSERT_EQ(async.rfind(base, 0), 0u);
    Json status = expect("GET", async.substr(base.size()), 200);
    EXPECT_EQ(status["status"], "Succeeded");
  }
  expect("GET", location.substr(base.size()), 204);
}

std::string ServeTest::sub() const { return "/subscriptions/" + subscription_id(); }
std::string ServeTest::rg(const std::string& name) const { return sub() + "/resourceGroups/" + name; }
std::string ServeTest::ws(const std::string& group, const std::string& name) const {
  return rg(group) + "/providers/Microsoft.BatchAI/workspaces/" + name;
}

std::pair<int, std::string> ServeTest::cli(std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {BATCHAI_EXE};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.stdout_file = home_ / "cli.out";
  spec.stderr_file = home_ / "cli.err";
  auto exit = make_posix_process_launcher()->run(spec);
  return {exit.exit_code, read_file(home_ / "cli.out") + read_file(home_ / "cli.err")};
}

ServeChild::ServeChild(const fs::path& home) : home_(home), launcher_(make_posix_process_launcher()) {
  ProcessSpec spec;
  spec.argv = {BATCHAI_EXE, "serve", "--port", "0"};
  spec.env = {{"BATCHAI_HOME", home.string()}, {"BATCHAI_SIM_DELAY_S", "0"}};
  spec.stdout_file = home / "serve.out";
  spec.stderr_file = home / "serve.err";
  std::error_code ec;
  fs::remove(home / "serve.out", ec);  // a former server's lines must not be read as this one's
  pid_ = launcher_->spawn(spec);
  for (int i = 0; i < 200 && std::count(out_.begin(), out_.end(), '\n') < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    out_ = read_file(home / "serve.out");
  }
  const auto at = out_.find("https://localhost:");
  if (at != std::string::npos) port_ = std::atoi(out_.c_str() + at + 18);
}

ServeChild::~ServeChild() {
  if (pid_ > 0 && !reaped_) stop(SIGKILL, std::chrono::seconds(10));
}

std::string ServeChild::why() const { return out_ + read_file(home_ / "serve.err"); }

std::optional<ProcessExit> ServeChild::stop(int signal, std::chrono::milliseconds timeout) {
  if (pid_ <= 0 || reaped_) return std::nullopt;
  launcher_->signal_group(pid_, signal);
  auto exit = launcher_->wait(pid_, timeout);
  reaped_ = exit.has_value();
  return exit;
}

bool exe_has_serve_command(const fs::path& scratch) {
  ProcessSpec help;
  help.argv = {BATCHAI_EXE, "serve", "--help"};
  help.stdout_file = scratch / "help.out";
  help.stderr_file = scratch / "help.out";
  return make_posix_process_launcher()->run(help).exit_code == 0;
}

}  // namespace batchai::serve
