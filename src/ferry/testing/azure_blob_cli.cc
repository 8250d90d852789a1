#include "ferry/testing/azure_blob_cli.h"

#include <stdlib.h>
#include <unistd.h>

#include <charconv>
#include <fstream>

#include "ferry/testing/subprocess.h"

#ifndef FERRY_SOURCE_DIR
#error "FERRY_SOURCE_DIR must name the source tree (set by src/ferry/testing/CMakeLists.txt)"
#endif

namespace ferry::testing {
namespace {

constexpr char kNpmHint[] = "run `make setup-npm` (npm ci in tests/azurite)";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      end = text.size();
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::string AzuriteNpmDir() {
  return std::string(FERRY_SOURCE_DIR) + "/tests/azurite";
}

Result<std::string> AzureBlobCli::Run(const std::vector<std::string>& args, int* exit_code) const {
  FERRY_ASSIGN_OR_RETURN(std::string node,
                         FindProgram("node", {}, "Node.js; `make setup` installs it"));
  const std::string modules = AzuriteNpmDir() + "/node_modules/@azure/storage-blob";
  if (access(modules.c_str(), R_OK) != 0) {
    return NotFound("{} not found: {}", modules, kNpmHint);
  }
  std::vector<std::string> argv = {node, AzuriteNpmDir() + "/blob.mjs"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProgramOptions options;
  options.env = {"AZURE_STORAGE_CONNECTION_STRING=" + connection_string_};
  if (!ca_file_.empty()) {
    options.env.push_back("NODE_EXTRA_CA_CERTS=" + ca_file_);
  }
  FERRY_ASSIGN_OR_RETURN(ProgramOutput out, RunProgram(argv, timeout_, options));
  if (exit_code != nullptr) {
    *exit_code = out.exit_code;
  } else if (out.exit_code != 0) {
    std::string command = "node blob.mjs";
    for (const std::string& arg : args) {
      command += " " + arg;
    }
    return Unavailable("{} exited with {}: {}{}", command, out.exit_code, out.err, out.out);
  }
  return out.out;
}

Status AzureBlobCli::CreateContainer(std::string_view container) const {
  int exit_code = 0;
  FERRY_ASSIGN_OR_RETURN(std::string out,
                         Run({"create-container", std::string(container)}, &exit_code));
  if (exit_code == 3) {
    return AlreadyExists("container {} exists", container);
  }
  if (exit_code != 0) {
    return Unavailable("create container {}: exit code {}: {}", container, exit_code, out);
  }
  return Status::OK();
}

Result<std::string> AzureBlobCli::Put(std::string_view container, std::string_view blob,
                                      std::string_view data, bool if_none_match) const {
  char tmpl[] = "/tmp/ferry-blob-put-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) {
    return ErrnoStatus(errno, "mkstemp", tmpl);
  }
  close(fd);
  {
    std::ofstream out(tmpl, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  std::vector<std::string> args = {"put", std::string(container), std::string(blob),
                                   std::string("@") + tmpl};
  if (if_none_match) {
    args.push_back("--if-none-match");
  }
  Result<std::string> out = Run(args);
  unlink(tmpl);
  if (!out.ok()) {
    return out.status();
  }
  std::vector<std::string> lines = Lines(*out);
  if (lines.empty()) {
    return Internal("blob.mjs put {}/{}: no outcome printed", container, blob);
  }
  return lines.back();
}

Result<std::vector<std::string>> AzureBlobCli::Sequence(
    const std::vector<std::vector<std::string>>& commands) const {
  std::vector<std::string> args = {"--framed"};
  for (size_t i = 0; i < commands.size(); ++i) {
    if (i > 0) {
      args.push_back("+");
    }
    args.insert(args.end(), commands[i].begin(), commands[i].end());
  }
  FERRY_ASSIGN_OR_RETURN(std::string out, Run(args));
  // "@@ <bytes>\n<output>\n" per command.
  std::vector<std::string> outputs;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t eol = out.find('\n', pos);
    if (out.compare(pos, 3, "@@ ") != 0 || eol == std::string::npos) {
      return Internal("blob.mjs --framed: no frame header at byte {} of its output", pos);
    }
    size_t bytes = 0;
    auto [end, ec] = std::from_chars(out.data() + pos + 3, out.data() + eol, bytes);
    if (ec != std::errc() || end != out.data() + eol || eol + 1 + bytes + 1 > out.size()) {
      return Internal("blob.mjs --framed: a bad frame at byte {} of its output", pos);
    }
    outputs.push_back(out.substr(eol + 1, bytes));
    pos = eol + 1 + bytes + 1;
  }
  if (outputs.size() != commands.size()) {
    return Internal("blob.mjs --framed: {} outputs for {} commands", outputs.size(),
                    commands.size());
  }
  return outputs;
}

Result<std::vector<std::string>> AzureBlobCli::Race(std::string_view container,
                                                    std::string_view blob, int writers) const {
  FERRY_ASSIGN_OR_RETURN(std::string out, Run({"race", std::string(container), std::string(blob),
                                               std::to_string(writers)}));
  return Lines(out);
}

std::string AzureBlobCli::RaceBody(int writer) {
  const std::string unit = "writer-" + std::to_string(writer) + "|";
  std::string body;
  while (body.size() < 65536) {
    body += unit;
  }
  body.resize(65536);
  return body;
}

Result<std::string> AzureBlobCli::ContainerSas(std::string_view container, int minutes) const {
  FERRY_ASSIGN_OR_RETURN(std::string out,
                         Run({"sas", std::string(container), std::to_string(minutes)}));
  std::vector<std::string> lines = Lines(out);
  if (lines.empty() || lines.back().empty()) {
    return Internal("blob.mjs sas {}: no signature printed", container);
  }
  return lines.back();
}

Result<std::string> AzureBlobCli::BlockCounts(std::string_view container,
                                              std::string_view blob) const {
  FERRY_ASSIGN_OR_RETURN(std::string out,
                         Run({"blocks", std::string(container), std::string(blob)}));
  std::vector<std::string> lines = Lines(out);
  return lines.empty() ? std::string() : lines.back();
}

Result<std::string> AzureBlobCli::Get(std::string_view container, std::string_view blob) const {
  return Run({"get", std::string(container), std::string(blob)});
}

Result<std::vector<std::string>> AzureBlobCli::List(std::string_view container,
                                                    std::string_view prefix) const {
  FERRY_ASSIGN_OR_RETURN(std::string out,
                         Run({"list", std::string(container), std::string(prefix)}));
  return Lines(out);
}

Status AzureBlobCli::DownloadPrefix(std::string_view container, std::string_view prefix,
                                    const std::string& local_dir) const {
  return Run({"download", std::string(container), std::string(prefix), local_dir}).status();
}

Result<int64_t> AzureBlobCli::UploadDirectory(const std::string& local_dir,
                                              std::string_view container,
                                              std::string_view prefix) const {
  FERRY_ASSIGN_OR_RETURN(std::string out,
                         Run({"upload", std::string(container), std::string(prefix), local_dir}));
  int64_t count = 0;
  auto [end, ec] = std::from_chars(out.data(), out.data() + out.size(), count);
  if (ec != std::errc()) {
    return Internal("blob.mjs upload {}: no count in its output: {}", local_dir, out);
  }
  return count;
}

}  // namespace ferry::testing
