#include "ferry/source/jetstream/ack_subject.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

namespace ferry::source::jetstream {
namespace {

// stream, consumer, delivered, stream sequence, consumer sequence, timestamp, pending.
using Fields =
    std::tuple<std::string_view, std::string_view, uint64_t, uint64_t, uint64_t, int64_t, uint64_t>;

// The parse of `subject` as Fields (nullopt when it is refused), by both overloads, which must
// agree (the string_view one is given a view that does not end at a NUL). The names are views
// into `subject` itself.
std::optional<Fields> Parse(std::string_view subject) {
  std::string terminated(subject);
  std::string padded = terminated + ".7";
  AckMetadata m;
  const bool by_view = ParseAckSubject(std::string_view(padded).substr(0, subject.size()), &m);
  AckMetadata z;
  const bool by_nul = ParseAckSubject(terminated.c_str(), &z);
  EXPECT_EQ(by_view, by_nul) << subject;
  if (!by_view || !by_nul) {
    return std::nullopt;
  }
  auto rebase = [&](std::string_view name, const std::string& parsed) {
    return subject.substr(static_cast<size_t>(name.data() - parsed.data()), name.size());
  };
  Fields f(rebase(m.stream, padded), rebase(m.consumer, padded), m.num_delivered, m.stream_sequence,
           m.consumer_sequence, m.timestamp_ns, m.pending);
  EXPECT_EQ(Fields(rebase(z.stream, terminated), rebase(z.consumer, terminated), z.num_delivered,
                   z.stream_sequence, z.consumer_sequence, z.timestamp_ns, z.pending),
            f);
  return f;
}

TEST(AckSubjectTest, ParsesV1Layout) {
  EXPECT_EQ(Parse("$JS.ACK.orders.yODcI6ly.1.3.1.1796024897078195083.4"),
            Fields("orders", "yODcI6ly", 1, 3, 1, 1796024897078195083, 4));
}

TEST(AckSubjectTest, ParsesV2LayoutWithAndWithoutRandomToken) {
  EXPECT_EQ(Parse("$JS.ACK.hub.ACCHASH.s.c.2.18446744073709551615.7.100.0"),
            Fields("s", "c", 2, 18446744073709551615u, 7, 100, 0));
  EXPECT_EQ(Parse("$JS.ACK._.ACCHASH.s.c.1.5.6.100.9.xyz"), Fields("s", "c", 1, 5, 6, 100, 9));
}

TEST(AckSubjectTest, ReadsTheLargestValues) {
  EXPECT_EQ(
      Parse("$JS.ACK.s.c.18446744073709551615.1.0.9223372036854775807.18446744073709551615"),
      Fields("s", "c", 18446744073709551615u, 1, 0, 9223372036854775807, 18446744073709551615u));
}

// The timestamp is signed, as the server writes it (an int64 of nanoseconds); it was read with
// from_chars<int64_t> before the one-pass parser.
TEST(AckSubjectTest, ReadsASignedTimestamp) {
  AckMetadata meta;
  ASSERT_TRUE(ParseAckSubject("$JS.ACK.s.c.1.2.3.-4.5", &meta));
  EXPECT_EQ(meta.timestamp_ns, -4);
  EXPECT_EQ(meta.pending, 5u);
  ASSERT_TRUE(ParseAckSubject("$JS.ACK.d.a.s.c.1.2.3.-9223372036854775808.5.r", &meta));
  EXPECT_EQ(meta.timestamp_ns, INT64_MIN);
  for (const char* bad : {
           "$JS.ACK.s.c.1.2.3.-9223372036854775809.5",  // below int64
           "$JS.ACK.s.c.1.2.3.-.5",                     // a sign alone
           "$JS.ACK.s.c.1.2.3.--4.5",                   // two signs
           "$JS.ACK.s.c.1.2.3.4-.5",                    // a sign after the digits
       }) {
    EXPECT_FALSE(ParseAckSubject(bad, &meta)) << bad;
    EXPECT_FALSE(Parse(bad).has_value()) << bad;
  }
}

TEST(AckSubjectTest, RejectsMalformedSubjects) {
  AckMetadata meta;
  for (const char* bad : {
           "", "_INBOX.abc", "$JS.ACK.",
           "$JS.ACK.s.c.1.2.3.4",                       // 6 tokens
           "$JS.ACK.s.c.1.2.3.4.5.6",                   // 8 tokens
           "$JS.ACK.s.c.1.x.3.4.5",                     // non-digit
           "$JS.ACK.s.c.1.-2.3.4.5",                    // sign
           "$JS.ACK.s.c.1..3.4.5",                      // empty number
           "$JS.ACK..c.1.2.3.4.5",                      // empty stream
           "$JS.ACK.s.c.1.18446744073709551616.3.4.5",  // overflow
           "$JS.ACK.a.b.s.c.1.2.3.4.5.6.7",             // 11 tokens
           "$JS.ACK.s.c.1.2.3.9223372036854775808.5",   // timestamp beyond int64
           "$JS.ACK.s.c.1.2.3.4.",                      // empty last number
           "$JS.ACK.s.c.1.2.3.4.5x",                    // trailing non-digit
           "$JS.ACK.s.c.1.2.3.4.+5",                    // sign
       }) {
    EXPECT_FALSE(ParseAckSubject(bad, &meta)) << bad;
    EXPECT_FALSE(Parse(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace ferry::source::jetstream
