#include "ferry/storage/s3/aws_profile.h"

#include "ferry/base/file.h"
#include "ferry/http/headers.h"

namespace ferry::storage::s3 {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The file's text; nullopt when it does not exist.
Result<std::optional<std::string>> ReadOptionalFile(const std::string& path) {
  Result<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return std::optional<std::string>();
    }
    return text.status().WithContext("AWS shared file");
  }
  return std::optional<std::string>(std::move(text).value());
}

}  // namespace

Result<IniSections> ParseAwsIni(std::string_view text, bool config_file, std::string_view path) {
  IniSections sections;
  std::map<std::string, std::string>* current = nullptr;
  std::string parent_key;  // a key with an empty value: indented lines below are its sub-keys
  int line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    bool indented = !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
    std::string_view line = Trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') {
      continue;
    }
    if (line.front() == '[') {
      if (line.back() != ']') {
        return InvalidArgument("{}:{}: unterminated section header", path, line_no);
      }
      std::string name(Trim(line.substr(1, line.size() - 2)));
      if (config_file && name.starts_with("profile ")) {
        name = std::string(Trim(std::string_view(name).substr(8)));
      }
      current = &sections[name];
      parent_key.clear();
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || current == nullptr) {
      return InvalidArgument("{}:{}: expected [section] or key = value", path, line_no);
    }
    std::string key = http::ToLowerAscii(Trim(line.substr(0, eq)));
    std::string value(Trim(line.substr(eq + 1)));
    if (indented && !parent_key.empty()) {
      (*current)[parent_key + "." + key] = value;
      continue;
    }
    parent_key = value.empty() ? key : std::string();
    (*current)[key] = value;
  }
  return sections;
}

std::string_view AwsProfile::Get(std::string_view key) const {
  auto it = values.find(std::string(key));
  return it == values.end() ? std::string_view() : std::string_view(it->second);
}

AwsSharedFiles AwsSharedFilePaths(const EnvLookup& env) {
  AwsSharedFiles files;
  std::optional<std::string> home = env("HOME");
  std::string aws_dir = home && !home->empty() ? *home + "/.aws/" : std::string();
  std::optional<std::string> creds = env("AWS_SHARED_CREDENTIALS_FILE");
  files.credentials = creds && !creds->empty()
                          ? *creds
                          : (aws_dir.empty() ? std::string() : aws_dir + "credentials");
  std::optional<std::string> config = env("AWS_CONFIG_FILE");
  files.config =
      config && !config->empty() ? *config : (aws_dir.empty() ? std::string() : aws_dir + "config");
  return files;
}

std::string AwsProfileName(const EnvLookup& env, std::string_view explicit_name) {
  if (!explicit_name.empty()) {
    return std::string(explicit_name);
  }
  std::optional<std::string> p = env("AWS_PROFILE");
  return p && !p->empty() ? *p : std::string("default");
}

Result<std::optional<AwsProfile>> LoadAwsProfile(const EnvLookup& env, std::string_view name) {
  AwsSharedFiles files = AwsSharedFilePaths(env);
  AwsProfile profile;
  profile.name = std::string(name);
  profile.files = files.credentials + " and " + files.config;
  bool found = false;
  // The config file first, so that the credentials file overrides it.
  for (bool config_file : {true, false}) {
    const std::string& path = config_file ? files.config : files.credentials;
    if (path.empty()) {
      continue;
    }
    FERRY_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadOptionalFile(path));
    if (!text) {
      continue;
    }
    FERRY_ASSIGN_OR_RETURN(IniSections sections, ParseAwsIni(*text, config_file, path));
    auto it = sections.find(profile.name);
    if (it == sections.end()) {
      continue;
    }
    found = true;
    for (auto& [k, v] : it->second) {
      profile.values[k] = v;
    }
  }
  if (!found) {
    return std::optional<AwsProfile>();
  }
  return std::optional<AwsProfile>(std::move(profile));
}

std::string ResolveAwsRegion(const EnvLookup& env, std::string_view explicit_region,
                             const std::optional<AwsProfile>& profile) {
  if (!explicit_region.empty()) {
    return std::string(explicit_region);
  }
  for (const char* var : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    std::optional<std::string> v = env(var);
    if (v && !v->empty()) {
      return *v;
    }
  }
  return profile ? std::string(profile->Get("region")) : std::string();
}

}  // namespace ferry::storage::s3
