// The AWS shared configuration files, as the AWS CLI and SDKs read them:
//   credentials: AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials; sections "[name]".
//   config:      AWS_CONFIG_FILE, else ~/.aws/config; sections "[profile name]" and "[default]".
// A profile merges both (the credentials file wins for a key in both). Lines are "key = value";
// '#' and ';' start a comment line; keys are case-insensitive (kept lower case); a key with an
// empty value followed by indented lines holds sub-keys, stored as "key.subkey"
// ("s3.addressing_style").
//
// Thread-safety: values and functions of their arguments.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/storage/s3/credentials.h"

namespace ferry::storage::s3 {

using IniSections = std::map<std::string, std::map<std::string, std::string>>;

// Parses one file's text. `config_file`: section names drop their "profile " prefix ("[profile
// x]" is profile x). InvalidArgument naming `path` and the line for a line that is neither.
Result<IniSections> ParseAwsIni(std::string_view text, bool config_file, std::string_view path);

struct AwsProfile {
  std::string name;
  std::map<std::string, std::string> values;
  // "~/.aws/credentials and ~/.aws/config" as read (for messages).
  std::string files;

  std::string_view Get(std::string_view key) const;
};

struct AwsSharedFiles {
  std::string credentials;
  std::string config;
};
// The two paths from the environment (HOME for the defaults); empty when neither the variable
// nor HOME is set.
AwsSharedFiles AwsSharedFilePaths(const EnvLookup& env);

// The profile to use: `explicit_name`, else AWS_PROFILE, else "default".
std::string AwsProfileName(const EnvLookup& env, std::string_view explicit_name);

// Profile `name` from both files; nullopt when neither file has it (missing files are fine). An
// unreadable or malformed file is an error.
Result<std::optional<AwsProfile>> LoadAwsProfile(const EnvLookup& env, std::string_view name);

// The region: `explicit_region`, else AWS_REGION, else AWS_DEFAULT_REGION, else the profile's
// `region`; "" when none is set.
std::string ResolveAwsRegion(const EnvLookup& env, std::string_view explicit_region,
                             const std::optional<AwsProfile>& profile);

}  // namespace ferry::storage::s3
