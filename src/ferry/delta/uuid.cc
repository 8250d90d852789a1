#include "ferry/delta/uuid.h"

#include <uuid/uuid.h>

namespace ferry::delta {

std::string RandomUuid() {
  uuid_t id;
  uuid_generate_random(id);
  char text[37];
  uuid_unparse_lower(id, text);
  return std::string(text);
}

}  // namespace ferry::delta
