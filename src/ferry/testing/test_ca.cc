#include "ferry/testing/test_ca.h"

#include <cerrno>
#include <chrono>
#include <fstream>
#include <vector>

#include "ferry/testing/subprocess.h"

namespace ferry::testing {
namespace {

constexpr char kOpensslHint[] = "Debian package openssl; `make setup` installs it";

Status Run(const std::vector<std::string>& argv) {
  FERRY_ASSIGN_OR_RETURN(ProgramOutput out, RunProgram(argv, std::chrono::seconds(60)));
  if (out.exit_code != 0) {
    return Unavailable("{} {} exited with {}: {}{}", argv[0], argv[1], out.exit_code, out.out,
                       out.err);
  }
  return Status::OK();
}

// An EC P-256 key: the same arguments for `req -newkey`.
std::vector<std::string> NewKeyArgs(const std::string& key_path) {
  return {"-newkey", "ec",      "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes",  "-keyout", key_path};
}

}  // namespace

Result<TestCa> TestCa::Create(const std::string& dir, const std::string& name) {
  FERRY_ASSIGN_OR_RETURN(std::string openssl,
                         FindProgram("openssl", {"/usr/bin/openssl"}, kOpensslHint));
  Files ca{.cert = dir + "/" + name + "-ca.pem", .key = dir + "/" + name + "-ca.key"};
  std::vector<std::string> argv = {openssl, "req", "-x509"};
  for (std::string& arg : NewKeyArgs(ca.key)) {
    argv.push_back(std::move(arg));
  }
  argv.insert(argv.end(),
              {"-out", ca.cert, "-days", "2", "-subj", "/CN=" + name + " test CA", "-addext",
               "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"});
  FERRY_RETURN_IF_ERROR(Run(argv).WithContext("test CA {} in {}", name, dir));
  return TestCa(std::move(openssl), dir, std::move(ca));
}

Result<TestCa::Files> TestCa::IssueServer(const std::string& name) const {
  return Issue(name, "/CN=localhost",
               "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
               "extendedKeyUsage=serverAuth,clientAuth\n");
}

Result<TestCa::Files> TestCa::IssueClient(const std::string& cn) const {
  return Issue(cn, "/CN=" + cn, "extendedKeyUsage=clientAuth\n");
}

Result<TestCa::Files> TestCa::Issue(const std::string& name, const std::string& subject,
                                    const std::string& extensions) const {
  Files files{.cert = dir_ + "/" + name + ".pem", .key = dir_ + "/" + name + ".key"};
  const std::string csr = dir_ + "/" + name + ".csr";
  const std::string ext = dir_ + "/" + name + ".ext";
  {
    std::ofstream out(ext);
    out << extensions;
    out.close();
    if (!out) {
      return ErrnoStatus(errno, "write", ext);
    }
  }
  std::vector<std::string> req = {openssl_, "req", "-new"};
  for (std::string& arg : NewKeyArgs(files.key)) {
    req.push_back(std::move(arg));
  }
  req.insert(req.end(), {"-out", csr, "-subj", subject});
  FERRY_RETURN_IF_ERROR(Run(req).WithContext("certificate request {}", name));
  FERRY_RETURN_IF_ERROR(
      Run({openssl_, "x509", "-req", "-in", csr, "-CA", ca_.cert, "-CAkey", ca_.key,
           "-CAcreateserial", "-out", files.cert, "-days", "2", "-extfile", ext})
          .WithContext("signing {} with {}", name, ca_.cert));
  return files;
}

}  // namespace ferry::testing
