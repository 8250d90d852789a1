#include "ferry/source/jetstream/delivered_msg.h"

#include <dlfcn.h>

#include <string_view>

namespace ferry::source::jetstream {
namespace {

using FreeFn = void (*)(void*);

// The versions whose natsMsg_Destroy was read (see the header).
bool AuditedVersion(std::string_view version) {
  return version == "3.4.1";
}

// natsMsg_free from the very object that provides natsMsg_Destroy (and answered
// nats_GetVersion), not merely the first such symbol in the process.
FreeFn ResolveFree() {
  const char* version = nats_GetVersion();
  if (version == nullptr || !AuditedVersion(version)) {
    return nullptr;
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&natsMsg_Destroy), &info) == 0 || info.dli_fname == nullptr) {
    return nullptr;
  }
  void* library = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) {
    return nullptr;
  }
  auto fn = reinterpret_cast<FreeFn>(dlsym(library, "natsMsg_free"));
  dlclose(library);  // only drops the reference RTLD_NOLOAD took: the library stays loaded
  return fn;
}

FreeFn DirectFree() {
  static const FreeFn fn = ResolveFree();
  return fn;
}

}  // namespace

bool DirectMsgFreeAvailable() {
  return DirectFree() != nullptr;
}

void FreeDeliveredMsg(natsMsg* msg) {
  if (msg == nullptr) {
    return;
  }
  if (FreeFn fn = DirectFree(); fn != nullptr) {
    fn(msg);
  } else {
    natsMsg_Destroy(msg);
  }
}

}  // namespace ferry::source::jetstream
