// RadosGw: a real S3 server for integration tests, Ceph's radosgw (Debian packages ceph-mon
// ceph-osd radosgw ceph-common) on a one-host Ceph cluster that lives in one temp directory:
// one monitor, one OSD whose objects are kept in memory (memstore), no manager, no
// authentication inside the cluster. The S3 endpoint is http://127.0.0.1:PORT, path-style, with
// one user whose access and secret keys are fixed.
//
// Start-up (numbered as in Start(); docs/testing-servers.md has the figures):
//   1. A temp dir /tmp/ferry-rgw-XXXXXX holds ceph.conf, the run dir (admin sockets), the logs
//      and the monitor's and OSD's data; free ports for the monitor and the gateway.
//   2. monmaptool and osdmaptool write the initial maps (the OSD map already holds osd.0, so no
//      `ceph osd new` round trip is needed); `ceph-mon --mkfs` and `ceph-osd --mkfs` run at once.
//   3. ceph-mon and ceph-osd start in the foreground (-f); wait for the OSD's "booting ->
//      active" (pools created before that stall radosgw ~5 s).
//   4. radosgw starts (it creates its pools); wait until its port accepts connections.
//   5. `radosgw-admin user create` with the fixed keys.
// A step that fails because a port was taken meanwhile (a bind race with another test) is
// retried from step 1 with new ports. The OSD binds ports in 6800-7300 itself, scanning for a
// free one, so several clusters run at once (ctest -j).
//
// Lifetime: every daemon is started with PR_SET_PDEATHSIG(SIGKILL) from the thread that called
// Start (it must outlive the server: the main thread, or Shared()); the destructor SIGKILLs
// them, reaps them and removes the temp dir. FERRY_KEEP_TEST_SERVERS=1 in the environment keeps
// the cluster and its directory after the test for debugging (the destructor prints how to reach
// and stop it).
//
// Thread-safety: Start, Stop, StopGateway and RestartGateway from one thread; the accessors,
// Alive, Log, Cli and CreateBucket from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/testing/s3_cli.h"
#include "ferry/testing/subprocess.h"

namespace ferry::testing {

class RadosGw {
 public:
  struct Options {
    // The OSD's capacity (memstore keeps every object in the OSD's memory); writes fail with
    // "full" errors past ~95 % of it.
    int64_t memstore_bytes = int64_t{1} << 30;
    // How long each start-up step may take before Start gives up.
    std::chrono::milliseconds step_timeout{60000};
  };

  // Brings up the cluster and the gateway (steps above). NotFound when a Ceph program is not
  // installed (`make setup`); Unavailable when a daemon exits or a step times out (the message
  // holds the tails of the logs).
  static Result<std::unique_ptr<RadosGw>> Start(Options options);
  static Result<std::unique_ptr<RadosGw>> Start() { return Start(Options{}); }
  // One cluster for the whole test binary, started on the first call and stopped when the
  // process exits; later calls return it, or the first call's error again. Unavailable when it
  // has died since (a test that kills daemons must Start its own).
  static Result<RadosGw*> Shared();
  ~RadosGw();

  RadosGw(const RadosGw&) = delete;
  RadosGw& operator=(const RadosGw&) = delete;

  // "http://127.0.0.1:PORT"
  std::string endpoint() const;
  int port() const { return rgw_port_; }
  const std::string& access_key() const;
  const std::string& secret_key() const;
  // The region to sign with; radosgw accepts any, this is the one the helpers use.
  const std::string& region() const;
  const std::string& dir() const { return dir_; }
  // The PIDs of ceph-mon, ceph-osd and radosgw (-1 for one that was stopped).
  std::vector<pid_t> pids() const;

  // Every daemon running (not exited, not a zombie).
  bool Alive() const;
  // SIGKILLs every daemon and reaps it; the temp dir stays until destruction.
  Status Stop();
  // SIGKILLs radosgw only: the endpoint refuses connections until RestartGateway.
  Status StopGateway();
  // Starts radosgw again on the same port. REQUIRES: StopGateway() was called.
  Status RestartGateway();
  // The tails of the daemons' logs (and radosgw-admin's), for failure messages.
  std::string Log() const;

  // A client for this server: curl's SigV4 signer and the Debian awscli (s3_cli.h).
  S3Cli Cli() const;
  // Creates a bucket through Cli(). AlreadyExists when it exists.
  Status CreateBucket(std::string_view bucket) const;

 private:
  RadosGw(Options options, std::string dir, int mon_port, int rgw_port);
  // Writes ceph.conf and the directories; returns the cluster's fsid.
  Result<std::string> WriteConfig() const;
  Status Bootstrap();
  Status StartGateway();
  Status WaitForOsd();
  Status WaitForGateway();
  Status CreateUser();
  Result<ProgramOutput> RunTool(const std::vector<std::string>& argv) const;
  Status DaemonsUp(std::string_view step) const;
  bool PortRace() const;
  void Release();

  const Options options_;
  const std::string dir_;
  const int mon_port_;
  const int rgw_port_;
  const bool keep_;
  std::string bin_dir_;  // where the Ceph programs are (/usr/bin)
  // Declared in start order; Stop() kills them in reverse.
  Subprocess mon_;
  Subprocess osd_;
  Subprocess rgw_;
};

}  // namespace ferry::testing
