// Time zones, Spark datetime patterns and the CAST readings of dates and timestamps. Expected
// instants were computed independently (Python's zoneinfo on the same tzdata) or come from
// Spark's documented examples, which run with the session time zone America/Los_Angeles.
#include <gtest/gtest.h>

#include "ferry/transform/civil_time.h"
#include "ferry/transform/datetime_cast.h"
#include "ferry/transform/datetime_pattern.h"
#include "ferry/transform/time_zone.h"

namespace ferry::transform {
namespace {

constexpr int64_t kSec = kMicrosPerSecond;

TimeZonePtr Zone(std::string_view name) {
  Result<TimeZonePtr> z = TimeZone::Load(name);
  EXPECT_TRUE(z.ok()) << name << ": " << z.status().ToString();
  return z.ok() ? *z : TimeZone::Utc();
}

int64_t Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return (DaysFromCivil(y, mo, d) * kSecondsPerDay + h * 3600 + mi * 60 + s) * kSec;
}

DateTimePattern Compile(std::string_view p, DateTimePattern::Purpose purpose) {
  Result<DateTimePattern> r = DateTimePattern::Compile(p, purpose);
  EXPECT_TRUE(r.ok()) << p << ": " << r.status().ToString();
  return r.ok() ? *r : *DateTimePattern::Compile("", purpose);
}

std::optional<int64_t> Parse(std::string_view pattern, std::string_view text,
                             std::string_view zone = "UTC") {
  return Compile(pattern, DateTimePattern::Purpose::kParse).Parse(text, *Zone(zone));
}

std::string Format(std::string_view pattern, int64_t micros, std::string_view zone = "UTC") {
  return Compile(pattern, DateTimePattern::Purpose::kFormat).Format(micros, *Zone(zone));
}

TEST(TimeZoneTest, FixedOffsetsAndShortIds) {
  EXPECT_EQ(Zone("UTC")->OffsetAt(0), 0);
  EXPECT_EQ(Zone("Z")->OffsetAt(0), 0);
  EXPECT_EQ(Zone("+05:30")->OffsetAt(0), 19800);
  EXPECT_EQ(Zone("-08")->OffsetAt(0), -28800);
  EXPECT_EQ(Zone("+0130")->OffsetAt(0), 5400);
  EXPECT_EQ(Zone("GMT+8")->OffsetAt(0), 28800);
  EXPECT_EQ(Zone("UTC-03:00")->OffsetAt(0), -10800);
  EXPECT_EQ(Zone("+05:30")->name(), "+05:30");
  EXPECT_EQ(Zone("EST")->OffsetAt(Utc(2026, 7, 1) / kSec), -18000);  // SHORT_IDS: fixed -05:00
  EXPECT_EQ(Zone("PST")->OffsetAt(Utc(2026, 7, 1) / kSec), -25200);  // America/Los_Angeles
  EXPECT_EQ(TimeZone::Load("+19:00").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TimeZone::Load("+5:30").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TimeZone::Load("../../etc/passwd").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TimeZone::Load("Mars/Olympus").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(TimeZone::Load("").status().code(), StatusCode::kInvalidArgument);
}

TEST(TimeZoneTest, RegionsFromTzdata) {
  TimeZonePtr paris = Zone("Europe/Paris");
  EXPECT_EQ(paris->OffsetAt(Utc(2026, 1, 15, 12) / kSec), 3600);
  EXPECT_EQ(paris->OffsetAt(Utc(2026, 7, 15, 12) / kSec), 7200);
  EXPECT_EQ(paris->AbbreviationAt(Utc(2026, 1, 15) / kSec), "CET");
  EXPECT_EQ(paris->AbbreviationAt(Utc(2026, 7, 15) / kSec), "CEST");
  // Past the file's transitions the POSIX footer rule applies.
  EXPECT_EQ(paris->OffsetAt(Utc(2100, 7, 1) / kSec), 7200);
  EXPECT_EQ(paris->OffsetAt(Utc(2100, 1, 1) / kSec), 3600);
  EXPECT_EQ(paris->OffsetAt(Utc(1900, 1, 1) / kSec), 561);  // local mean time before 1911
  TimeZonePtr la = Zone("America/Los_Angeles");
  EXPECT_EQ(la->OffsetAt(0), -28800);
  // Half-hour DST (Lord Howe: +10:30 standard, +11 in summer), far in the future.
  TimeZonePtr lh = Zone("Australia/Lord_Howe");
  EXPECT_EQ(lh->OffsetAt(Utc(2030, 1, 1) / kSec), 39600);
  EXPECT_EQ(lh->OffsetAt(Utc(2030, 7, 1) / kSec), 37800);
}

TEST(TimeZoneTest, LocalTimesInGapsAndOverlapsResolveLikeJavaTime) {
  TimeZonePtr paris = Zone("Europe/Paris");
  int64_t gap = Utc(2026, 3, 29, 2, 30) / kSec;       // 02:30 does not exist that night
  EXPECT_EQ(paris->LocalToUtc(gap), 1774747800);      // later by the gap: 03:30 CEST
  int64_t overlap = Utc(2026, 10, 25, 2, 30) / kSec;  // 02:30 happens twice
  EXPECT_EQ(paris->LocalToUtc(overlap), 1792888200);  // the earlier offset, +02:00
  EXPECT_EQ(paris->LocalToUtc(Utc(2026, 1, 1, 12) / kSec), Utc(2026, 1, 1, 11) / kSec);
}

TEST(TimeZoneTest, PosixRulesAndCorruptFiles) {
  Result<TimeZone::Rule> r = ParsePosixTzRule("CET-1CEST,M3.5.0,M10.5.0/3");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->standard.offset, 3600);
  EXPECT_EQ(r->daylight.offset, 7200);
  EXPECT_EQ(r->end.time, 10800);
  Result<TimeZone::Rule> q = ParsePosixTzRule("<+0330>-3:30");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->standard.offset, 12600);
  EXPECT_FALSE(q->has_dst);
  EXPECT_TRUE(ParsePosixTzRule("EST5EDT").ok());
  EXPECT_TRUE(ParsePosixTzRule("<-03>3<-02>,M3.5.0/-2,M10.5.0/-1").ok());
  for (const char* bad : {"", "C1", "CET-1CEST,M13.5.0,M10.5.0", "CET-1CEST,M3.5.0", "<X"}) {
    EXPECT_FALSE(ParsePosixTzRule(bad).ok()) << bad;
  }
  EXPECT_EQ(TimeZone::FromTzif("x", "TZif2").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(TimeZone::FromTzif("x", std::string(60, 'a')).status().code(), StatusCode::kDataLoss);
}

TEST(DateTimePatternTest, TheDateTimeExampleOfIssue6) {
  // from_unixtime(unix_timestamp(dateTime, 'MM/dd/yyyy - HH:mm:ss Z'), 'MM/dd/yyyy')
  std::optional<int64_t> t = Parse("MM/dd/yyyy - HH:mm:ss Z", "11/30/2026 - 07:10:00 +0000");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, 1796022600 * kSec);
  EXPECT_EQ(Format("MM/dd/yyyy", *t), "11/30/2026");
  // The offset in the text wins over the session zone; the output is in the session zone.
  std::optional<int64_t> late = Parse("MM/dd/yyyy - HH:mm:ss Z", "11/30/2026 - 20:00:00 -1000");
  EXPECT_EQ(Format("MM/dd/yyyy", *late), "12/01/2026");
  EXPECT_EQ(Format("MM/dd/yyyy", *late, "America/Los_Angeles"), "11/30/2026");
  EXPECT_FALSE(Parse("MM/dd/yyyy - HH:mm:ss Z", "11/31/2026 - 07:10:00 +0000"));  // Nov 31
  EXPECT_FALSE(Parse("MM/dd/yyyy - HH:mm:ss Z", "11/30/2026 07:10:00 +0000"));
  EXPECT_FALSE(Parse("MM/dd/yyyy - HH:mm:ss Z", "11/30/2026 - 07:10:00 +00:00"));
  EXPECT_FALSE(Parse("MM/dd/yyyy - HH:mm:ss Z", "11/30/2026 - 07:10:00 +0000 "));
  EXPECT_FALSE(Parse("MM/dd/yyyy - HH:mm:ss Z", ""));
}

TEST(DateTimePatternTest, SparkDocumentedExamples) {
  // Session time zone America/Los_Angeles, as in Spark's function reference.
  const char* la = "America/Los_Angeles";
  EXPECT_EQ(Format("yyyy-MM-dd HH:mm:ss", 0, la), "1969-12-31 16:00:00");  // from_unixtime(0, ..)
  EXPECT_EQ(*Parse("yyyy-MM-dd", "2016-04-08", la), 1460098800 * kSec);    // unix_timestamp
  EXPECT_EQ(Format("y", *Parse("yyyy-MM-dd", "2016-04-08", la), la), "2016");  // date_format
  EXPECT_EQ(Format("MM/dd/yyy", Utc(2015, 4, 8)), "04/08/2015");     // pyspark date_format
  EXPECT_EQ(*Parse("yyyy-MM-dd", "2016-12-31"), Utc(2016, 12, 31));  // to_timestamp
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm:ss", "2016-12-31 00:12:00"), Utc(2016, 12, 31, 0, 12));
}

TEST(DateTimePatternTest, NumbersWidthsAndAdjacentFields) {
  EXPECT_EQ(*Parse("yyyyMMdd", "20261130"), Utc(2026, 11, 30));
  EXPECT_EQ(*Parse("yyyyMMddHHmmss", "20261130071000"), Utc(2026, 11, 30, 7, 10));
  EXPECT_EQ(*Parse("yyyy-M-d H:m", "2026-1-5 7:5"), Utc(2026, 1, 5, 7, 5));
  EXPECT_FALSE(Parse("yyyy-MM-dd", "2026-1-05"));  // MM takes exactly two digits
  EXPECT_EQ(*Parse("yy-MM-dd", "26-11-30"), Utc(2026, 11, 30));
  EXPECT_EQ(*Parse("yyyy-DDD", "2024-060"), Utc(2024, 2, 29));
  EXPECT_EQ(*Parse("HH:mm", "07:10"), Utc(1970, 1, 1, 7, 10));  // missing date: 1970-01-01
  EXPECT_FALSE(Parse("yyyy-MM-dd", "2023-02-29"));
  EXPECT_FALSE(Parse("HH:mm", "24:00"));
  EXPECT_EQ(*Parse("kk:mm", "24:00"), Utc(1970, 1, 1));
  EXPECT_EQ(Format("yyyy-MM-dd", Utc(12026, 1, 2)), "+12026-01-02");
  EXPECT_EQ(Format("yy D DDD d", Utc(2026, 2, 3)), "26 34 034 3");
}

TEST(DateTimePatternTest, FractionsAmPmAndText) {
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm:ss.SSS", "2020-01-01 00:00:00.1"), Utc(2020, 1, 1) + 100000);
  EXPECT_FALSE(Parse("yyyy-MM-dd HH:mm:ss.SSS", "2020-01-01 00:00:00.1234"));
  EXPECT_EQ(*Parse("ss.SSSSSSSSS", "01.123456789"), kSec + 123456);  // beyond micros: truncated
  EXPECT_EQ(Format("HH:mm:ss.SSSSSS", Utc(2020, 1, 1, 1, 2, 3) + 4500), "01:02:03.004500");
  EXPECT_EQ(Format("ss.SS", 990000), "00.99");
  EXPECT_EQ(*Parse("hh:mm a", "07:10 PM"), Utc(1970, 1, 1, 19, 10));
  EXPECT_EQ(*Parse("hh:mm a", "12:00 am"), Utc(1970, 1, 1));
  EXPECT_EQ(*Parse("hh:mm", "12:30"), Utc(1970, 1, 1, 0, 30));  // no AM/PM: AM, as in Spark
  EXPECT_EQ(Format("h:mm a K k", Utc(2026, 1, 1, 0, 5)), "12:05 AM 0 24");
  EXPECT_EQ(Format("h:mm a", Utc(2026, 1, 1, 13, 5)), "1:05 PM");
  EXPECT_EQ(*Parse("dd MMM yyyy", "30 Nov 2026"), Utc(2026, 11, 30));
  EXPECT_EQ(*Parse("dd MMMM yyyy", "30 NOVEMBER 2026"), Utc(2026, 11, 30));
  EXPECT_EQ(Format("EEE, dd MMM yyyy", Utc(2026, 11, 30)), "Mon, 30 Nov 2026");
  EXPECT_EQ(Format("EEEE MMMM MMMMM G", Utc(2026, 11, 30)), "Monday November N AD");
  EXPECT_EQ(*Parse("EEE, dd MMM yyyy", "Mon, 30 Nov 2026"), Utc(2026, 11, 30));
  EXPECT_FALSE(Parse("EEE, dd MMM yyyy", "Tue, 30 Nov 2026"));  // wrong day of the week
  EXPECT_EQ(Format("Q QQ QQQ QQQQ", Utc(2026, 8, 1)), "3 03 Q3 3rd quarter");
}

TEST(DateTimePatternTest, LiteralsAndOptionalSections) {
  EXPECT_EQ(*Parse("yyyy-MM-dd'T'HH:mm:ss", "2026-11-30T07:10:00"), Utc(2026, 11, 30, 7, 10));
  EXPECT_EQ(Format("yyyy-MM-dd'T'HH:mm''ss", Utc(2026, 11, 30, 7, 10)), "2026-11-30T07:10'00");
  EXPECT_EQ(Format("'o''clock' h", Utc(2026, 1, 1, 15)), "o'clock 3");
  EXPECT_EQ(*Parse("yyyy-MM-dd[ HH:mm[:ss]]", "2026-11-30"), Utc(2026, 11, 30));
  EXPECT_EQ(*Parse("yyyy-MM-dd[ HH:mm[:ss]]", "2026-11-30 07:10"), Utc(2026, 11, 30, 7, 10));
  EXPECT_EQ(*Parse("yyyy-MM-dd[ HH:mm[:ss]]", "2026-11-30 07:10:05"), Utc(2026, 11, 30, 7, 10, 5));
  EXPECT_FALSE(Parse("yyyy-MM-dd[ HH:mm]", "2026-11-30 07"));
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm:ss[.SSS][XXX]", "2026-11-30 07:10:00+01:00"),
            Utc(2026, 11, 30, 6, 10));
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm:ss[.SSS][XXX]", "2026-11-30 07:10:00.5Z"),
            Utc(2026, 11, 30, 7, 10) + 500000);
}

TEST(DateTimePatternTest, ZonesAndOffsets) {
  int64_t t = Utc(2026, 7, 1, 12);
  EXPECT_EQ(Format("VV z O OOOO", t, "Europe/Paris"), "Europe/Paris CEST GMT+2 GMT+02:00");
  EXPECT_EQ(Format("X XX XXX XXXX XXXXX", t, "+05:30"), "+0530 +0530 +05:30 +0530 +05:30");
  EXPECT_EQ(Format("X XXX x xx xxx", t, "UTC"), "Z Z +00 +0000 +00:00");
  EXPECT_EQ(Format("Z ZZZZ ZZZZZ", t, "-08:00"), "-0800 GMT-08:00 -08:00");
  EXPECT_EQ(Format("Z ZZZZ ZZZZZ O", t, "UTC"), "+0000 GMT Z GMT");
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm VV", "2026-07-01 14:00 Europe/Paris"), t);
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm z", "2026-07-01 05:00 PST"), t);
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm O", "2026-07-01 20:00 GMT+8"), t);
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm XXX", "2026-07-01 12:00 Z"), t);
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm X", "2026-07-01 13:30 +0130"), t);
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm X", "2026-07-01 13:00 +01"), t);
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm xxx", "2026-07-01 10:00 -02:00"), t);
  EXPECT_FALSE(Parse("yyyy-MM-dd HH:mm xxx", "2026-07-01 12:00 Z"));
  // Without an offset, the session zone decides.
  EXPECT_EQ(*Parse("yyyy-MM-dd HH:mm", "2026-07-01 14:00", "Europe/Paris"), t);
  EXPECT_EQ(*Compile("yyyy-MM-dd HH:mm XXX", DateTimePattern::Purpose::kParse)
                 .ParseLocal("2026-07-01 14:00 +05:00"),
            Utc(2026, 7, 1, 14));
}

TEST(DateTimePatternTest, PatternsSparkRefuses) {
  using P = DateTimePattern::Purpose;
  EXPECT_EQ(DateTimePattern::Compile("YYYY-ww", P::kFormat).status().message(),
            "datetime pattern 'YYYY-ww': letter 'Y' at 1: week-based patterns are not supported "
            "(as in Spark 3)");
  EXPECT_FALSE(DateTimePattern::Compile("ddd", P::kFormat).ok());
  EXPECT_FALSE(DateTimePattern::Compile("EEEEEE", P::kFormat).ok());
  EXPECT_FALSE(DateTimePattern::Compile("Q", P::kParse).ok());
  EXPECT_TRUE(DateTimePattern::Compile("Q", P::kFormat).ok());
  EXPECT_FALSE(DateTimePattern::Compile("yyyy'", P::kFormat).ok());
  EXPECT_FALSE(DateTimePattern::Compile("yyyy]", P::kFormat).ok());
  EXPECT_FALSE(DateTimePattern::Compile("yyyy{", P::kFormat).ok());
  EXPECT_FALSE(DateTimePattern::Compile("V", P::kFormat).ok());
  EXPECT_FALSE(DateTimePattern::Compile("A", P::kFormat).ok());
  EXPECT_TRUE(DateTimePattern::Compile("yyyy-MM-dd [HH", P::kParse).ok());  // open section
}

// Found by json_decoder_fuzzer: a six-digit year past about 292,277 overflowed the int64
// microseconds (UB); such text is not a timestamp.
TEST(DateTimeCastTest, YearsBeyondTheMicrosRangeAreNotTimestamps) {
  const TimeZone& utc = *TimeZone::Utc();
  EXPECT_TRUE(ParseTimestampText("200000-01-01T00:00:00Z", utc).has_value());
  for (const char* bad : {"400046-01-01T00:00:00Z", "-400046-01-01 00:00:00", "999999-12-31",
                          "400046-01-01 00:00:00 +01:00", "400046-01-01 00:00:00 Europe/Paris"}) {
    EXPECT_FALSE(ParseTimestampText(bad, utc)) << bad;
    EXPECT_FALSE(ParseTimestampText(bad, *Zone("Europe/Paris"))) << bad;
  }
  EXPECT_FALSE(ParseLocalTimestampText("400046-01-01 00:00:00"));
}

TEST(DateTimeCastTest, LenientIsoTimestamps) {
  const TimeZone& utc = *TimeZone::Utc();
  EXPECT_EQ(*ParseTimestampText("2026-11-30", utc), Utc(2026, 11, 30));
  EXPECT_EQ(*ParseTimestampText("2026", utc), Utc(2026, 1, 1));
  EXPECT_EQ(*ParseTimestampText("2026-11", utc), Utc(2026, 11, 1));
  EXPECT_EQ(*ParseTimestampText(" 2026-1-5 7:5:3 ", utc), Utc(2026, 1, 5, 7, 5, 3));
  EXPECT_EQ(*ParseTimestampText("2026-11-30T07:10:00.123456789Z", utc),
            Utc(2026, 11, 30, 7, 10) + 123456);
  EXPECT_EQ(*ParseTimestampText("2026-11-30 07:10 +01:00", utc), Utc(2026, 11, 30, 6, 10));
  EXPECT_EQ(*ParseTimestampText("2026-11-30T07:10:00UTC", utc), Utc(2026, 11, 30, 7, 10));
  EXPECT_EQ(*ParseTimestampText("2026-07-01 14:00:00 Europe/Paris", utc), Utc(2026, 7, 1, 12));
  EXPECT_EQ(*ParseTimestampText("2026-07-01 14:00:00", *Zone("Europe/Paris")), Utc(2026, 7, 1, 12));
  EXPECT_EQ(*ParseTimestampText("2026-11-30T", utc), Utc(2026, 11, 30));
  for (const char* bad :
       {"", "abc", "2026-13-01", "2026-11-30 25:00:00", "2026-11-30T07", "26-11-30",
        "2026-11-30 07:10:00 Nowhere/City", "2026-11-30 07:10:60", "2026/11/30"}) {
    EXPECT_FALSE(ParseTimestampText(bad, utc)) << bad;
  }
  EXPECT_EQ(*ParseLocalTimestampText("2026-11-30 07:10:00+05:00"), Utc(2026, 11, 30, 7, 10));
}

// "yyyy-MM-dd" and "yyyy-MM-ddTHH:mm:ss" are read by position; near misses take the general
// reading. Both must agree.
TEST(DateTimeCastTest, FixedWidthIsoFormsAndNearMisses) {
  const TimeZone& utc = *TimeZone::Utc();
  const TimeZone& paris = *Zone("Europe/Paris");
  EXPECT_EQ(*ParseTimestampText("2026-01-05T07:05:03Z", utc), Utc(2026, 1, 5, 7, 5, 3));
  EXPECT_EQ(*ParseTimestampText("2026-01-05 07:05:03", paris), Utc(2026, 1, 5, 6, 5, 3));
  EXPECT_EQ(*ParseTimestampText("2026-01-05T07:05:03.5Z", utc), Utc(2026, 1, 5, 7, 5, 3) + 500000);
  EXPECT_EQ(*ParseTimestampText("2026-01-05T07:05:03.000001Z", utc), Utc(2026, 1, 5, 7, 5, 3) + 1);
  EXPECT_EQ(*ParseTimestampText("2026-01-05T07:05:03.999999999Z", utc),
            Utc(2026, 1, 5, 7, 5, 3) + 999999);
  EXPECT_EQ(*ParseTimestampText("2026-01-05T07:05:03 Z", utc), Utc(2026, 1, 5, 7, 5, 3));
  EXPECT_EQ(*ParseTimestampText("2026-01-05T07:05:03-01:30", utc), Utc(2026, 1, 5, 8, 35, 3));
  EXPECT_EQ(*ParseTimestampText("2026-01-05T07:05:03+01:00", paris), Utc(2026, 1, 5, 6, 5, 3));
  EXPECT_EQ(*ParseTimestampText("2026-01-05T07:05:03.25 Europe/Paris", utc),
            Utc(2026, 1, 5, 6, 5, 3) + 250000);
  EXPECT_EQ(*ParseTimestampText("2024-02-29T23:59:59Z", utc), Utc(2024, 2, 29, 23, 59, 59));
  EXPECT_EQ(*ParseTimestampText("0001-01-01T00:00:00Z", utc), Utc(1, 1, 1));
  EXPECT_EQ(*ParseTimestampText("2026-01-05T07:05Z", utc), Utc(2026, 1, 5, 7, 5));
  EXPECT_EQ(*ParseTimestampText("2026-01-05T7:05:03Z", utc), Utc(2026, 1, 5, 7, 5, 3));
  EXPECT_EQ(*ParseTimestampText("20260-1-05T07:05:03Z", utc), Utc(20260, 1, 5, 7, 5, 3));
  EXPECT_EQ(*ParseTimestampText("+2026-01-05T07:05:03Z", utc), Utc(2026, 1, 5, 7, 5, 3));
  EXPECT_EQ(*ParseTimestampText("2026-01-05T07:05:03", utc), Utc(2026, 1, 5, 7, 5, 3));
  EXPECT_EQ(*ParseLocalTimestampText("2026-01-05T07:05:03.1Z"), Utc(2026, 1, 5, 7, 5, 3) + 100000);
  EXPECT_EQ(*ParseLocalTimestampText("2026-01-05 07:05:03"), Utc(2026, 1, 5, 7, 5, 3));
  for (const char* bad :
       {"2026-01-05T07:05:033Z", "2026-01-05T07:05:03.Z", "2026-01-05T07:05:03.1234567891Z",
        "2026-01-05T24:00:00Z", "2026-01-05T07:60:00Z", "2026-01-05T07:05:60Z",
        "2026-02-29T07:05:03Z", "2026-00-05T07:05:03Z", "2026-01-00T07:05:03Z",
        "2026-01-32T07:05:03Z", "2026-01-05T07:05:03X", "2026-01-05x07:05:03Z",
        "2026-01-05T07-05-03Z", "2026-01-05T07:05:0aZ", "2026-01-0aT07:05:03Z",
        "2026-1a-05T07:05:03Z", "2a26-01-05T07:05:03Z", "2026-01-05T07:05:03ZZ"}) {
    EXPECT_FALSE(ParseTimestampText(bad, utc)) << bad;
  }
  EXPECT_FALSE(ParseLocalTimestampText("2026-01-05T07:05:033"));
  EXPECT_FALSE(ParseLocalTimestampText("2026-01-05T07:05:03 Nowhere/City"));

  EXPECT_EQ(*ParseDateText("2024-02-29"), 19782);
  EXPECT_EQ(*ParseDateText("1969-12-31"), -1);
  EXPECT_EQ(*ParseDateText("0000-01-01"), -719528);
  EXPECT_EQ(*ParseDateText(" 2024-02-29 "), 19782);
  EXPECT_EQ(*ParseDateText("2024-02-29 07"), 19782);
  EXPECT_EQ(*ParseDateText("2024-2-29"), 19782);
  EXPECT_EQ(*ParseDateText("02024-02-29"), 19782);
  EXPECT_EQ(*ParseDateText("-2024-02-29"), DaysFromCivil(-2024, 2, 29));
  for (const char* bad :
       {"2023-02-29", "2024-13-01", "2024-00-01", "2024-01-00", "2024-01-32", "2024-01-011",
        "2024-01-01x", "2024/01/01", "2024-01-1a", "202a-01-01", "2024-0a-01"}) {
    EXPECT_FALSE(ParseDateText(bad)) << bad;
  }
}

// The fixed-width forms are read eight characters at a time; a leading '+' sends the same text
// through the general reading. Each template, and every variant with one character replaced by
// one of the characters the fast reading tests for or next to them, reads the same both ways.
TEST(DateTimeCastTest, FastFixedWidthReadingAgreesWithTheGeneralOne) {
  const TimeZone& utc = *TimeZone::Utc();
  const std::string replacements =
      std::string("0189/:;-.T Zx+") + '\x00' + '\x3f' + '\xb0' + '\xff';
  int checked = 0;
  for (std::string base : {"2026-01-05T07:05:03Z", "2024-02-29 23:59:59.123456Z",
                           "1999-12-31T00:00:00", "2026-11-30T12:34:56+01:00", "2026-01-05"}) {
    for (size_t at = 0; at <= base.size(); ++at) {
      for (char c : replacements) {
        std::string s = base;
        if (at < base.size()) {
          s[at] = c;
        }
        SCOPED_TRACE(testing::PrintToString(s));
        EXPECT_EQ(ParseTimestampText(s, utc), ParseTimestampText("+" + s, utc));
        EXPECT_EQ(ParseLocalTimestampText(s), ParseLocalTimestampText("+" + s));
        EXPECT_EQ(ParseDateText(s), ParseDateText("+" + s));
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_EQ(*ParseTimestampText("2024-02-29 23:59:59.123456Z", utc),
            Utc(2024, 2, 29, 23, 59, 59) + 123456);
  EXPECT_EQ(*ParseDateText("2026-01-05"), DaysFromCivil(2026, 1, 5));
}

TEST(DateTimeCastTest, DatesAndCanonicalText) {
  EXPECT_EQ(*ParseDateText("2026-11-30"), 20787);
  EXPECT_EQ(*ParseDateText("2026-11-30 anything"), 20787);
  EXPECT_EQ(*ParseDateText("2026-11-30T07:00"), 20787);
  EXPECT_FALSE(ParseDateText("2026-11-31"));
  EXPECT_FALSE(ParseDateText("30.11.2026"));
  std::string s;
  FormatTimestampText(0, *Zone("America/Los_Angeles"), &s);
  EXPECT_EQ(s, "1969-12-31 16:00:00");
  s.clear();
  FormatTimestampText(Utc(2026, 11, 30) + 500000, *TimeZone::Utc(), &s);
  EXPECT_EQ(s, "2026-11-30 00:00:00.5");
  s.clear();
  FormatLocalTimestampText(-1, &s);
  EXPECT_EQ(s, "1969-12-31 23:59:59.999999");
  s.clear();
  FormatDateText(-1, &s);
  EXPECT_EQ(s, "1969-12-31");
}

TEST(CivilTimeTest, RoundTripsOverFourHundredYears) {
  for (int64_t d = DaysFromCivil(1800, 1, 1); d < DaysFromCivil(2200, 1, 1); d += 7) {
    CivilDate c = CivilFromDays(d);
    ASSERT_EQ(DaysFromCivil(c.year, c.month, c.day), d);
    ASSERT_GE(c.day, 1);
    ASSERT_LE(c.day, DaysInMonth(c.year, c.month));
  }
  EXPECT_EQ(DayOfWeek(20787), 0);  // 2026-11-30 is a Monday
}

}  // namespace
}  // namespace ferry::transform
