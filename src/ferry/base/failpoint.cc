#include "ferry/base/failpoint.h"

#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <thread>

namespace ferry::failpoint {
namespace internal {
std::atomic<bool> any_armed{false};
}  // namespace internal

namespace {

enum class Action { kOff, kCrash, kError, kSleep, kWait };
enum class Trigger { kAlways, kOnce, kFrom, kPercent };

struct Spec {
  Action action = Action::kOff;
  std::string error_kind = "EIO";
  int64_t sleep_ms = 0;
  std::string wait_path;
  Trigger trigger = Trigger::kAlways;
  int64_t n = 0;
  int64_t hits = 0;
};

struct Registry {
  std::mutex mu;
  std::map<std::string, Spec, std::less<>> specs;
  std::mt19937_64 rng{std::random_device{}()};
  bool env_loaded = false;
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // never destroyed: used from exit paths
  return *registry;
}

bool ParseInt(std::string_view s, int64_t* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

Status ParseSpec(std::string_view text, Spec* spec) {
  std::string_view s = text;
  // The trigger follows the argument: an argument (a path) may hold '@' or '%' itself.
  size_t close = s.rfind(')');
  size_t trig = s.find_first_of("@%", close == std::string_view::npos ? 0 : close);
  std::string_view trigger_text;
  if (trig != std::string_view::npos) {
    trigger_text = s.substr(trig);
    s = s.substr(0, trig);
  }
  std::string_view arg;
  size_t paren = s.find('(');
  if (paren != std::string_view::npos) {
    if (s.back() != ')') {
      return InvalidArgument("failpoint spec '{}': missing ')'", text);
    }
    arg = s.substr(paren + 1, s.size() - paren - 2);
    s = s.substr(0, paren);
  }
  if (s == "off") {
    spec->action = Action::kOff;
  } else if (s == "crash") {
    spec->action = Action::kCrash;
  } else if (s == "error") {
    spec->action = Action::kError;
    if (!arg.empty()) {
      if (arg != "EIO" && arg != "ENOSPC" && arg != "FSYNC") {
        return InvalidArgument("failpoint spec '{}': error kind must be EIO, ENOSPC or FSYNC",
                               text);
      }
      spec->error_kind = std::string(arg);
    }
  } else if (s == "sleep") {
    spec->action = Action::kSleep;
    if (!ParseInt(arg, &spec->sleep_ms) || spec->sleep_ms < 0) {
      return InvalidArgument("failpoint spec '{}': sleep needs milliseconds, e.g. sleep(100)",
                             text);
    }
  } else if (s == "wait") {
    spec->action = Action::kWait;
    if (arg.empty()) {
      return InvalidArgument("failpoint spec '{}': wait needs a file path, e.g. wait(/tmp/go)",
                             text);
    }
    spec->wait_path = std::string(arg);
  } else {
    return InvalidArgument(
        "failpoint spec '{}': unknown action '{}' (crash, error, sleep, wait, off)", text, s);
  }
  if (!trigger_text.empty()) {
    std::string_view num = trigger_text.substr(1);
    if (trigger_text[0] == '%') {
      spec->trigger = Trigger::kPercent;
    } else if (!num.empty() && num.back() == '+') {
      spec->trigger = Trigger::kFrom;
      num.remove_suffix(1);
    } else {
      spec->trigger = Trigger::kOnce;
    }
    if (!ParseInt(num, &spec->n) || spec->n < 0) {
      return InvalidArgument("failpoint spec '{}': bad trigger '{}'", text, trigger_text);
    }
  }
  return Status::OK();
}

void LoadEnvLocked(Registry& r) {
  if (r.env_loaded) {
    return;
  }
  r.env_loaded = true;
  const char* env = std::getenv("FERRY_FAILPOINTS");
  if (env == nullptr || *env == '\0') {
    return;
  }
  std::string_view list(env);
  while (!list.empty()) {
    size_t semi = list.find(';');
    std::string_view item = list.substr(0, semi);
    list = semi == std::string_view::npos ? std::string_view() : list.substr(semi + 1);
    if (item.empty()) {
      continue;
    }
    size_t eq = item.find('=');
    Spec spec;
    Status st = eq == std::string_view::npos
                    ? InvalidArgument("failpoint '{}': expected name=spec", item)
                    : ParseSpec(item.substr(eq + 1), &spec);
    if (!st.ok()) {
      // A typo in a fault test must not silently test nothing.
      std::fprintf(stderr, "FERRY_FAILPOINTS: %s\n", st.ToString().c_str());
      std::abort();
    }
    r.specs[std::string(item.substr(0, eq))] = spec;
  }
}

// Arms the atomic flag at static-initialization time when the environment names failpoints.
struct EnvLoader {
  EnvLoader() {
    const char* env = std::getenv("FERRY_FAILPOINTS");
    if (env != nullptr && *env != '\0') {
      Registry& r = GetRegistry();
      std::lock_guard lock(r.mu);
      LoadEnvLocked(r);
      internal::any_armed.store(true);
    }
  }
};
const EnvLoader env_loader;

}  // namespace

Status Arm(std::string_view name, std::string_view spec_text) {
  Spec spec;
  FERRY_RETURN_IF_ERROR(ParseSpec(spec_text, &spec));
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  LoadEnvLocked(r);
  r.specs[std::string(name)] = spec;
  internal::any_armed.store(true);
  return Status::OK();
}

Status ArmFromString(std::string_view list) {
  while (!list.empty()) {
    size_t semi = list.find(';');
    std::string_view item = list.substr(0, semi);
    list = semi == std::string_view::npos ? std::string_view() : list.substr(semi + 1);
    if (item.empty()) {
      continue;
    }
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgument("failpoint '{}': expected name=spec", item);
    }
    FERRY_RETURN_IF_ERROR(Arm(item.substr(0, eq), item.substr(eq + 1)));
  }
  return Status::OK();
}

void DisarmAll() {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  r.env_loaded = true;
  r.specs.clear();
  internal::any_armed.store(false);
}

int64_t HitCount(std::string_view name) {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  auto it = r.specs.find(name);
  return it == r.specs.end() ? 0 : it->second.hits;
}

namespace {

// Every firing is written to stderr, so a fault test can tell from the log that the point was
// reached even when ferry handles the error silently (a put whose outcome is read back).
void Announce(const std::string& line) {
  ssize_t ignored = ::write(2, line.data(), line.size());
  (void)ignored;
}

}  // namespace

namespace internal {

Status Evaluate(std::string_view name) {
  Action action;
  std::string error_kind;
  int64_t sleep_ms;
  std::string wait_path;
  {
    Registry& r = GetRegistry();
    std::lock_guard lock(r.mu);
    auto it = r.specs.find(name);
    if (it == r.specs.end()) {
      return Status::OK();
    }
    Spec& spec = it->second;
    spec.hits++;
    bool fire = false;
    switch (spec.trigger) {
      case Trigger::kAlways:
        fire = true;
        break;
      case Trigger::kOnce:
        fire = spec.hits == spec.n;
        break;
      case Trigger::kFrom:
        fire = spec.hits >= spec.n;
        break;
      case Trigger::kPercent:
        fire = static_cast<int64_t>(r.rng() % 100) < spec.n;
        break;
    }
    if (!fire) {
      return Status::OK();
    }
    action = spec.action;
    error_kind = spec.error_kind;
    sleep_ms = spec.sleep_ms;
    wait_path = spec.wait_path;
  }
  switch (action) {
    case Action::kOff:
      return Status::OK();
    case Action::kCrash: {
      std::string line = fmt::format("failpoint {}: crash\n", name);
      ssize_t ignored = ::write(2, line.data(), line.size());
      (void)ignored;
      ::raise(SIGKILL);
      std::_Exit(137);
    }
    case Action::kSleep:
      Announce(fmt::format("failpoint {}: sleep {} ms\n", name, sleep_ms));
      std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      return Status::OK();
    case Action::kWait: {
      Announce(fmt::format("failpoint {}: wait {}\n", name, wait_path));
      // Bounded: a test that died before creating the file must not leave ferry stalled forever.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
      while (::access(wait_path.c_str(), F_OK) != 0 &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      return Status::OK();
    }
    case Action::kError:
      Announce(fmt::format("failpoint {}: error {}\n", name, error_kind));
      if (error_kind == "ENOSPC") {
        return ResourceExhausted("failpoint {}: injected ENOSPC (No space left on device)", name);
      }
      if (error_kind == "FSYNC") {
        return IOError("failpoint {}: injected fsync failure", name);
      }
      return IOError("failpoint {}: injected EIO (Input/output error)", name);
  }
  return Status::OK();
}

}  // namespace internal
}  // namespace ferry::failpoint
