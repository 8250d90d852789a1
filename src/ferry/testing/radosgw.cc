#include "ferry/testing/radosgw.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "ferry/testing/loopback.h"
#include "ferry/testing/test_server.h"

namespace ferry::testing {
namespace {

constexpr char kAccessKey[] = "FERRYTESTACCESSKEY00";
constexpr char kSecretKey[] = "ferry-test-secret-key-not-a-secret-000000";
constexpr char kRegion[] = "us-east-1";
constexpr char kCephHint[] =
    "Debian packages ceph-mon ceph-osd radosgw ceph-common; `make setup` installs them";

Result<std::string> RandomUuid() {
  std::ifstream in("/proc/sys/kernel/random/uuid");
  std::string uuid;
  if (!std::getline(in, uuid) || uuid.size() != 36) {
    return Internal("cannot read a uuid from /proc/sys/kernel/random/uuid");
  }
  return uuid;
}

// Two distinct ports that were free a moment ago (both sockets held open while picking).
Result<std::pair<int, int>> TwoFreePorts() {
  FERRY_ASSIGN_OR_RETURN(int a, ListenOnLoopback(0));
  Result<int> b = ListenOnLoopback(0);
  if (!b.ok()) {
    close(a);
    return b.status();
  }
  Result<int> port_a = LocalPort(a);
  Result<int> port_b = LocalPort(*b);
  close(a);
  close(*b);
  if (!port_a.ok()) {
    return port_a.status();
  }
  if (!port_b.ok()) {
    return port_b.status();
  }
  return std::make_pair(*port_a, *port_b);
}

bool FileContains(const std::string& path, std::string_view needle) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.find(needle) != std::string::npos;
}

// Runs the programs at once (e.g. the two mkfs steps); the first failure, if any.
Status RunConcurrently(const std::vector<std::vector<std::string>>& commands,
                       std::chrono::milliseconds timeout) {
  std::vector<Status> results(commands.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < commands.size(); ++i) {
    threads.emplace_back([&, i] {
      Result<ProgramOutput> out = RunProgram(commands[i], timeout);
      if (!out.ok()) {
        results[i] = out.status();
      } else if (out->exit_code != 0) {
        results[i] = Unavailable("{} exited with {}:\n{}{}", commands[i][0], out->exit_code,
                                 out->out, out->err);
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  for (Status& s : results) {
    FERRY_RETURN_IF_ERROR(s);
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<RadosGw>> RadosGw::Start(Options options) {
  FERRY_ASSIGN_OR_RETURN(std::string radosgw,
                         FindProgram("radosgw", {"/usr/bin/radosgw"}, kCephHint));
  std::string bin_dir = radosgw.substr(0, radosgw.rfind('/'));
  for (const char* tool : {"ceph-mon", "ceph-osd", "radosgw-admin", "monmaptool", "osdmaptool"}) {
    if (access((bin_dir + "/" + tool).c_str(), X_OK) != 0) {
      return NotFound("{}/{} not found ({})", bin_dir, tool, kCephHint);
    }
  }
  Status last;
  for (int attempt = 1; attempt <= kServerStartAttempts; ++attempt) {
    char tmpl[] = "/tmp/ferry-rgw-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      return ErrnoStatus(errno, "mkdtemp", tmpl);
    }
    Result<std::pair<int, int>> ports = TwoFreePorts();
    if (!ports.ok()) {
      std::filesystem::remove_all(tmpl);
      return ports.status();
    }
    std::unique_ptr<RadosGw> server(new RadosGw(options, tmpl, ports->first, ports->second));
    server->bin_dir_ = bin_dir;
    last = server->Bootstrap();
    if (last.ok()) {
      return server;
    }
    if (!server->PortRace()) {
      return last;
    }
    // A port was taken between picking it and the daemon binding it: again with new ports.
  }
  return last.WithContext("radosgw: {} attempts lost a port to another process",
                          kServerStartAttempts);
}

Result<RadosGw*> RadosGw::Shared() {
  return SharedServer<RadosGw>("radosgw", [] { return Start(); });
}

RadosGw::RadosGw(Options options, std::string dir, int mon_port, int rgw_port)
    : options_(options),
      dir_(std::move(dir)),
      mon_port_(mon_port),
      rgw_port_(rgw_port),
      keep_(KeepTestServers()) {}

RadosGw::~RadosGw() {
  if (keep_) {
    std::vector<pid_t> running = pids();
    fprintf(stderr,
            "FERRY_KEEP_TEST_SERVERS: radosgw kept at %s (access key %s, secret key %s, region "
            "%s), data and logs in %s; stop it with: kill -9 %d %d %d; rm -rf %s\n",
            endpoint().c_str(), kAccessKey, kSecretKey, kRegion, dir_.c_str(), running[0],
            running[1], running[2], dir_.c_str());
    mon_.Release();
    osd_.Release();
    rgw_.Release();
    return;
  }
  Stop().IgnoreError();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string RadosGw::endpoint() const {
  return "http://127.0.0.1:" + std::to_string(rgw_port_);
}
const std::string& RadosGw::access_key() const {
  static const std::string key = kAccessKey;
  return key;
}
const std::string& RadosGw::secret_key() const {
  static const std::string key = kSecretKey;
  return key;
}
const std::string& RadosGw::region() const {
  static const std::string region = kRegion;
  return region;
}

std::vector<pid_t> RadosGw::pids() const {
  return {mon_.pid(), osd_.pid(), rgw_.pid()};
}

bool RadosGw::Alive() const {
  return mon_.Alive() && osd_.Alive() && rgw_.Alive();
}

Result<std::string> RadosGw::WriteConfig() const {
  FERRY_ASSIGN_OR_RETURN(std::string fsid, RandomUuid());
  for (const char* sub : {"run", "log", "mon", "osd", "rgw"}) {
    std::error_code ec;
    std::filesystem::create_directories(dir_ + "/" + sub, ec);
    if (ec) {
      return IOError("create {}/{}: {}", dir_, sub, ec.message());
    }
  }
  // Why each setting is here: shared/FIELD-NOTES.md, "Object storage test servers".
  std::ostringstream conf;
  conf << "[global]\n"
       << "fsid = " << fsid << "\n"
       << "mon host = v2:127.0.0.1:" << mon_port_ << "\n"
       << "mon initial members = a\n"
       << "public addr = 127.0.0.1\n"
       << "run dir = " << dir_ << "/run\n"
       << "admin socket = " << dir_ << "/run/$name.asok\n"
       << "log file = " << dir_ << "/log/$name.log\n"
       << "pid file = " << dir_ << "/run/$name.pid\n"
       << "crash dir = " << dir_ << "/crash\n"
       << "keyring = /dev/null\n"
       // No cephx inside the cluster; the client side must then speak crc, or radosgw loops
       // on "get_initial_auth_request returned -13".
       << "auth cluster required = none\n"
       << "auth service required = none\n"
       << "auth client required = none\n"
       << "ms mon client mode = crc\n"
       << "ms bind msgr1 = false\n"
       << "ms bind ipv6 = false\n"
       // Fail fast on a taken port (Start retries with new ones) instead of 3 x 5 s.
       << "ms bind retry count = 1\n"
       << "ms bind retry delay = 0\n"
       // Each monitor command would otherwise wait ~1 s for a proposal: start-up ~12 s.
       << "paxos propose interval = 0.01\n"
       << "paxos min wait = 0.001\n"
       // The monitor runs crushtool (~0.2-0.3 s) for every new pool without this.
       << "mon osd crush smoke test = false\n"
       // One OSD: one replica, every placement group on it, one placement group per pool.
       << "osd pool default size = 1\n"
       << "osd pool default min size = 1\n"
       << "mon allow pool size one = true\n"
       << "mon warn on pool no redundancy = false\n"
       << "osd crush chooseleaf type = 0\n"
       << "osd pool default pg num = 1\n"
       << "osd pool default pgp num = 1\n"
       // A nearly full /tmp must not make the monitor shut itself down mid-test.
       << "mon data avail crit = 0\n"
       << "mon data avail warn = 0\n"
       << "[mon.a]\n"
       << "mon data = " << dir_
       << "/mon\n"
       // The cluster and audit logs go to /var/log/ceph by default.
       << "mon cluster log file = default=" << dir_ << "/log/ceph.$channel.log cluster=" << dir_
       << "/log/ceph.log\n"
       << "[osd.0]\n"
       << "osd data = " << dir_ << "/osd\n"
       << "osd objectstore = memstore\n"
       << "memstore device bytes = " << options_.memstore_bytes << "\n"
       << "[client.rgw.a]\n"
       << "rgw frontends = beast endpoint=127.0.0.1:" << rgw_port_ << "\n"
       << "rgw data = " << dir_
       << "/rgw\n"
       // 512 by default: fewer threads, less memory; tests send a few requests at a time.
       << "rgw thread pool size = 32\n";
  std::ofstream out(dir_ + "/ceph.conf");
  out << conf.str();
  out.close();
  if (!out) {
    return IOError("write {}/ceph.conf", dir_);
  }
  return fsid;
}

Status RadosGw::Bootstrap() {
  const std::string conf = dir_ + "/ceph.conf";
  // 1. (Start made the dir and picked the ports.)
  FERRY_ASSIGN_OR_RETURN(std::string fsid, WriteConfig());
  // 2. Initial maps, then both stores at once (the OSD's mkfs needs no monitor with
  //    --no-mon-config: the fsid is in ceph.conf).
  FERRY_RETURN_IF_ERROR(RunConcurrently(
      {{bin_dir_ + "/monmaptool", "--create", "--clobber", "--fsid", fsid, "--addv", "a",
        "[v2:127.0.0.1:" + std::to_string(mon_port_) + "]", dir_ + "/monmap"},
       {bin_dir_ + "/osdmaptool", "--createsimple", "1", "--clobber", dir_ + "/osdmap"}},
      options_.step_timeout));
  FERRY_RETURN_IF_ERROR(RunConcurrently(
      {{bin_dir_ + "/ceph-mon", "-c", conf, "-i", "a", "--mkfs", "--monmap", dir_ + "/monmap",
        "--osdmap", dir_ + "/osdmap"},
       {bin_dir_ + "/ceph-osd", "-c", conf, "-i", "0", "--mkfs", "--no-mon-config"}},
      options_.step_timeout));
  // 3. The monitor and the OSD; radosgw only once the OSD is active.
  ProgramOptions daemon;
  daemon.die_with_parent = !keep_;
  FERRY_ASSIGN_OR_RETURN(mon_,
                         Subprocess::Start({bin_dir_ + "/ceph-mon", "-c", conf, "-i", "a", "-f"},
                                           dir_ + "/log/mon.a.out", daemon));
  FERRY_ASSIGN_OR_RETURN(osd_,
                         Subprocess::Start({bin_dir_ + "/ceph-osd", "-c", conf, "-i", "0", "-f"},
                                           dir_ + "/log/osd.0.out", daemon));
  FERRY_RETURN_IF_ERROR(WaitForOsd());
  // 4. The gateway.
  FERRY_RETURN_IF_ERROR(StartGateway());
  // 5. The user.
  return CreateUser();
}

Status RadosGw::StartGateway() {
  ProgramOptions daemon;
  daemon.die_with_parent = !keep_;
  FERRY_ASSIGN_OR_RETURN(rgw_, Subprocess::Start({bin_dir_ + "/radosgw", "-c", dir_ + "/ceph.conf",
                                                  "-n", "client.rgw.a", "-f"},
                                                 dir_ + "/log/client.rgw.a.out", daemon));
  return WaitForGateway();
}

Status RadosGw::WaitForOsd() {
  const std::string log = dir_ + "/log/osd.0.log";
  auto deadline = std::chrono::steady_clock::now() + options_.step_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    FERRY_RETURN_IF_ERROR(DaemonsUp("OSD start-up"));
    if (FileContains(log, "state: booting -> active")) {
      return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Unavailable("radosgw cluster in {}: the OSD was not active within {} ms; log:\n{}", dir_,
                     options_.step_timeout.count(), Log());
}

Status RadosGw::WaitForGateway() {
  auto deadline = std::chrono::steady_clock::now() + options_.step_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    FERRY_RETURN_IF_ERROR(DaemonsUp("radosgw start-up"));
    int fd = ConnectToLoopback(rgw_port_);
    if (fd >= 0) {
      close(fd);
      return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Unavailable("radosgw on port {} did not accept connections within {} ms; log:\n{}",
                     rgw_port_, options_.step_timeout.count(), Log());
}

Status RadosGw::CreateUser() {
  return RunTool({bin_dir_ + "/radosgw-admin", "-c", dir_ + "/ceph.conf", "user", "create",
                  "--uid=ferry", "--display-name=ferry test user",
                  std::string("--access-key=") + kAccessKey,
                  std::string("--secret-key=") + kSecretKey})
      .status();
}

Result<ProgramOutput> RadosGw::RunTool(const std::vector<std::string>& argv) const {
  FERRY_ASSIGN_OR_RETURN(ProgramOutput out, RunProgram(argv, options_.step_timeout));
  if (out.exit_code != 0) {
    return Unavailable("{} exited with {}:\n{}{}\nlog:\n{}", argv[0], out.exit_code, out.out,
                       out.err, Log());
  }
  return out;
}

Status RadosGw::DaemonsUp(std::string_view step) const {
  for (const Subprocess* daemon : {&mon_, &osd_, &rgw_}) {
    if (daemon->pid() > 0 && !daemon->Alive()) {
      return Unavailable("radosgw cluster in {}: {} exited during {}; log:\n{}", dir_,
                         daemon->name(), step, Log());
    }
  }
  return Status::OK();
}

bool RadosGw::PortRace() const {
  for (const char* name : {"mon.a", "osd.0", "client.rgw.a"}) {
    for (const char* ext : {".log", ".out"}) {
      if (FileContains(dir_ + "/log/" + name + ext, "Address already in use")) {
        return true;
      }
    }
  }
  return false;
}

Status RadosGw::Stop() {
  Status rgw = rgw_.Kill();
  Status osd = osd_.Kill();
  Status mon = mon_.Kill();
  FERRY_RETURN_IF_ERROR(rgw);
  FERRY_RETURN_IF_ERROR(osd);
  return mon;
}

Status RadosGw::StopGateway() {
  return rgw_.Kill();
}

Status RadosGw::RestartGateway() {
  if (rgw_.pid() > 0) {
    return Internal("radosgw on port {} is still running", rgw_port_);
  }
  return StartGateway();
}

S3Cli RadosGw::Cli() const {
  S3Cli::Config config;
  config.endpoint = endpoint();
  config.access_key = kAccessKey;
  config.secret_key = kSecretKey;
  config.region = kRegion;
  config.scratch_dir = dir_;
  return S3Cli(std::move(config));
}

Status RadosGw::CreateBucket(std::string_view bucket) const {
  return Cli().CreateBucket(bucket);
}

std::string RadosGw::Log() const {
  std::string log;
  for (const char* name : {"mon.a", "osd.0", "client.rgw.a", "client.admin"}) {
    for (const char* ext : {".log", ".out"}) {
      std::string path = dir_ + "/log/" + name + ext;
      if (access(path.c_str(), R_OK) == 0) {
        log += "==> " + path + " <==\n" + TailOfFile(path, 25) + "\n";
      }
    }
  }
  return log;
}

}  // namespace ferry::testing
