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

FreeFn ResolveFree() {
  const char* version = nats_GetVersion();
  if (version == nullptr || !AuditedVersion(version)) {
    return nullptr;
  }
  return reinterpret_cast<FreeFn>(dlsym(RTLD_DEFAULT, "natsMsg_free"));
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
