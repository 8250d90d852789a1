#include "ferry/app/message_template.h"

#include <gtest/gtest.h>

#include <set>

namespace ferry::app {
namespace {

using std::chrono::system_clock;

// 2026-11-30 07:10:00.123456 UTC, a Monday.
system_clock::time_point When() {
  return system_clock::time_point(std::chrono::microseconds(1796022600123456));
}

std::string Render(std::string_view text, int64_t seq = 17) {
  Result<MessageTemplate> t = MessageTemplate::Parse(text);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) {
    return "";
  }
  std::string out;
  t->Render(seq, When(), &out);
  return out;
}

TEST(MessageTemplateTest, TheDemoMessage) {
  EXPECT_EQ(Render(R"({"id": {{seq}}, "dateTime": "{{now:MM/dd/yyyy - HH:mm:ss Z}}", )"
                   R"("payload": "test #{{Count}}"})"),
            R"({"id": 17, "dateTime": "11/30/2026 - 07:10:00 +0000", "payload": "test #17"})");
}

TEST(MessageTemplateTest, LiteralsAndSeq) {
  EXPECT_EQ(Render("plain text, no placeholders"), "plain text, no placeholders");
  EXPECT_EQ(Render(""), "");
  EXPECT_EQ(Render("{{seq}}{{seq}}", 5), "55");
  EXPECT_EQ(Render("{{ Count }}", -3), "-3");  // the NATS CLI's spacing
  EXPECT_EQ(Render("a } b }} c {d}"), "a } b }} c {d}");
}

TEST(MessageTemplateTest, PatternLetters) {
  EXPECT_EQ(Render("{{now:yyyy-MM-dd HH:mm:ss.SSS}}"), "2026-11-30 07:10:00.123");
  EXPECT_EQ(Render("{{now:yy y yyyyy}}"), "26 2026 02026");
  EXPECT_EQ(Render("{{now:M MM MMM MMMM MMMMM}}"), "11 11 Nov November N");
  EXPECT_EQ(Render("{{now:d dd H HH h hh m mm s ss a}}"), "30 30 7 07 7 07 10 10 0 00 AM");
  EXPECT_EQ(Render("{{now:S SS SSSSSS SSSSSSSSS}}"), "1 12 123456 123456000");
  EXPECT_EQ(Render("{{now:E EEE EEEE EEEEE}}"), "Mon Mon Monday M");
  EXPECT_EQ(Render("{{now:Z ZZZ ZZZZ ZZZZZ X XXX z zzzz}}"),
            "+0000 +0000 GMT Z Z Z UTC Coordinated Universal Time");
  EXPECT_EQ(Render("{{now}}"), "2026-11-30T07:10:00.123Z");
}

TEST(MessageTemplateTest, AfternoonAndMidnightHours) {
  Result<MessageTemplate> t = MessageTemplate::Parse("{{now:h a HH}}");
  ASSERT_TRUE(t.ok());
  std::string out;
  t->Render(0, system_clock::time_point(std::chrono::seconds(1796043600)), &out);  // 13:00
  EXPECT_EQ(out, "1 PM 13");
  t->Render(0, system_clock::time_point(std::chrono::seconds(1795996800)), &out);  // 00:00
  EXPECT_EQ(out, "12 AM 00");
}

TEST(MessageTemplateTest, QuotedText) {
  EXPECT_EQ(Render("{{now:yyyy'T'HH}}"), "2026T07");
  EXPECT_EQ(Render("{{now:'day' d ''}}"), "day 30 '");
  EXPECT_EQ(Render("{{now:'it''s' H}}"), "it's 7");
  EXPECT_EQ(Render("{{now:HH:mm}}"), "07:10");  // ':' after the first is pattern text
}

TEST(MessageTemplateTest, TimeIsRenderedPerMessage) {
  Result<MessageTemplate> t = MessageTemplate::Parse("{{now:ss.SSS}}");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->uses_time());
  std::string a;
  std::string b;
  t->Render(1, When(), &a);
  t->Render(2, When() + std::chrono::milliseconds(1), &b);
  EXPECT_EQ(a, "00.123");
  EXPECT_EQ(b, "00.124");
  Result<MessageTemplate> coarse = MessageTemplate::Parse("{{now:ss}}");
  ASSERT_TRUE(coarse.ok());
  coarse->Render(1, When(), &a);
  coarse->Render(2, When() + std::chrono::seconds(1), &b);
  EXPECT_EQ(a, "00");
  EXPECT_EQ(b, "01");
  EXPECT_FALSE(MessageTemplate::Parse("{{seq}}")->uses_time());
}

TEST(MessageTemplateTest, RandomLetters) {
  Result<MessageTemplate> t = MessageTemplate::Parse("<{{rand:25}}>");
  ASSERT_TRUE(t.ok());
  std::set<std::string> seen;
  std::string out;
  for (int i = 0; i < 20; ++i) {
    t->Render(i, &out);
    ASSERT_EQ(out.size(), 27u);
    EXPECT_EQ(out.front(), '<');
    EXPECT_EQ(out.back(), '>');
    for (size_t j = 1; j + 1 < out.size(); ++j) {
      EXPECT_TRUE(std::isalpha(static_cast<unsigned char>(out[j]))) << out;
    }
    seen.insert(out);
  }
  EXPECT_EQ(seen.size(), 20u);
}

TEST(MessageTemplateTest, SeededRandomnessRepeats) {
  Result<MessageTemplate> a = MessageTemplate::Parse("{{rand:8}} {{uuid}}");
  Result<MessageTemplate> b = MessageTemplate::Parse("{{rand:8}} {{uuid}}");
  ASSERT_TRUE(a.ok() && b.ok());
  a->Seed(42);
  b->Seed(42);
  std::string x;
  std::string y;
  a->Render(1, &x);
  b->Render(1, &y);
  EXPECT_EQ(x, y);
}

TEST(MessageTemplateTest, UuidVersion4) {
  Result<MessageTemplate> t = MessageTemplate::Parse("{{uuid}}");
  ASSERT_TRUE(t.ok());
  std::string a;
  std::string b;
  t->Render(1, &a);
  t->Render(2, &b);
  EXPECT_NE(a, b);
  ASSERT_EQ(a.size(), 36u);
  for (size_t i : {8, 13, 18, 23}) {
    EXPECT_EQ(a[i], '-') << a;
  }
  EXPECT_EQ(a[14], '4') << a;
  EXPECT_NE(std::string("89ab").find(a[19]), std::string::npos) << a;
  for (char c : a) {
    EXPECT_TRUE(c == '-' || std::isxdigit(static_cast<unsigned char>(c))) << a;
    EXPECT_FALSE(std::isupper(static_cast<unsigned char>(c))) << a;
  }
}

// {{cycle:...}} takes its values in turn from seq 1, whatever the first seq is.
TEST(MessageTemplateTest, CycleTakesTheValuesInTurn) {
  std::string seen;
  for (int64_t seq = 1; seq <= 7; ++seq) {
    seen += Render("{{cycle:a, bb ,c}}|", seq);
  }
  EXPECT_EQ(seen, "a|bb|c|a|bb|c|a|");
  EXPECT_EQ(Render("{\"kind\": \"{{cycle:x}}\", \"id\": {{seq}}}", 41),
            "{\"kind\": \"x\", \"id\": 41}");
  EXPECT_EQ(Render("{{cycle:p,q}}", 0), "q");
}

TEST(MessageTemplateTest, ErrorsNameTheProblem) {
  auto error = [](std::string_view text) {
    Result<MessageTemplate> t = MessageTemplate::Parse(text);
    EXPECT_FALSE(t.ok()) << text;
    return t.ok() ? std::string() : t.status().message();
  };
  EXPECT_NE(error("x {{seq").find("offset 2"), std::string::npos);
  EXPECT_NE(error("{{foo}}").find("'{{foo}}'"), std::string::npos);
  EXPECT_NE(error("{{seq:3}}").find("unknown placeholder"), std::string::npos);
  EXPECT_NE(error("{{rand}}").find("unknown placeholder"), std::string::npos);
  EXPECT_NE(error("{{rand:0}}").find("rand:N"), std::string::npos);
  EXPECT_NE(error("{{rand:abc}}").find("rand:N"), std::string::npos);
  EXPECT_NE(error("{{rand:99999999}}").find("rand:N"), std::string::npos);
  EXPECT_NE(error("{{cycle:a,,b}}").find("empty value"), std::string::npos);
  EXPECT_NE(error("{{cycle}}").find("unknown placeholder"), std::string::npos);
  EXPECT_NE(error("{{now:YYYY}}").find("letter 'Y'"), std::string::npos);
  EXPECT_NE(error("{{now:ddd}}").find("too many 'd'"), std::string::npos);
  EXPECT_NE(error("{{now:aa}}").find("too many 'a'"), std::string::npos);
  EXPECT_NE(error("{{now:'open}}").find("unclosed quote"), std::string::npos);
  EXPECT_NE(error("{{now:[HH]}}").find("reserved"), std::string::npos);
}

}  // namespace
}  // namespace ferry::app
