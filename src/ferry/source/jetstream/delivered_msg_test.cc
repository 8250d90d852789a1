#include "ferry/source/jetstream/delivered_msg.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <string>
#include <string_view>
#include <vector>

namespace ferry::source::jetstream {
namespace {

natsMsg* MakeMsg(int i, bool headers) {
  std::string data = "payload " + std::to_string(i);
  natsMsg* msg = nullptr;
  EXPECT_EQ(natsMsg_Create(&msg, "subject", "$JS.ACK.s.c.1.2.3.4.5", data.data(),
                           static_cast<int>(data.size())),
            NATS_OK);
  if (headers && msg != nullptr) {
    EXPECT_EQ(natsMsgHeader_Set(msg, "Nats-Msg-Id", std::to_string(i).c_str()), NATS_OK);
    EXPECT_EQ(natsMsgHeader_Add(msg, "k", "v"), NATS_OK);
  }
  return msg;
}

TEST(DeliveredMsgTest, DirectFreeOnTheAuditedLibraryVersion) {
  // Debian 12's libnats is 3.4.1: there the direct free must be found, or the benchmark figures
  // in docs/BENCHMARKS.md no longer describe what runs.
  if (std::string_view(nats_GetVersion()) == "3.4.1") {
    EXPECT_TRUE(DirectMsgFreeAvailable());
  } else {
    EXPECT_FALSE(DirectMsgFreeAvailable()) << nats_GetVersion();
  }
}

// Under ASan+UBSan (make test) a leak, a double free or a free of the wrong pointer fails this.
TEST(DeliveredMsgTest, FreesMessagesWithAndWithoutHeaders) {
  std::vector<DeliveredMsgPtr> held;
  for (int i = 0; i < 1000; ++i) {
    held.emplace_back(MakeMsg(i, i % 2 == 0));
    ASSERT_NE(held.back(), nullptr);
  }
  // Reading headers builds the message's header map, which the free must release too.
  for (size_t i = 0; i < held.size(); i += 2) {
    const char* value = nullptr;
    ASSERT_EQ(natsMsgHeader_Get(held[i].get(), "Nats-Msg-Id", &value), NATS_OK);
    EXPECT_EQ(std::string_view(value), std::to_string(i));
    EXPECT_EQ(std::string_view(natsMsg_GetData(held[i].get()),
                               static_cast<size_t>(natsMsg_GetDataLength(held[i].get()))),
              "payload " + std::to_string(i));
  }
  held.clear();
  FreeDeliveredMsg(nullptr);  // a no-op, like natsMsg_Destroy(NULL)
}

}  // namespace
}  // namespace ferry::source::jetstream
