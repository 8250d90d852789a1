// Expression tests. Where a case cites "Spark:", the expected value is the one in the Examples
// of Spark's function reference: the ExpressionDescription annotations in apache/spark
// sql/catalyst/src/main/scala/org/apache/spark/sql/catalyst/expressions/
// (datetimeExpressions.scala, stringExpressions.scala, regexpExpressions.scala,
// jsonExpressions.scala, hash.scala, nullExpressions.scala), whose session time zone is
// America/Los_Angeles. Timestamps are compared through CAST(... AS STRING), which prints them
// in the session zone as Spark displays them.
#include "ferry/transform/expression.h"

#include <gtest/gtest.h>

#include <random>

#include "ferry/columnar/ddl.h"
#include "ferry/transform/json_decoder.h"
#include "ferry/transform/row_text_for_test.h"

namespace ferry::transform {
namespace {

constexpr const char* kLA = "America/Los_Angeles";

// A batch decoded from JSON rows, and expressions evaluated on it.
class Table {
 public:
  Table(std::string_view ddl, const std::vector<std::string>& rows) {
    schema_ = std::make_shared<const columnar::Schema>(*columnar::ParseDdlSchema(ddl));
    batch_ = columnar::RecordBatch::MakeEmpty(schema_);
    auto decoder = std::move(*JsonDecoder::Create(schema_, {}));
    for (const std::string& r : rows) {
      Status st = decoder->Append(r, &batch_);
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
  }

  // The values of `expr`, one CellText per row, or {"ERROR: message"}.
  std::vector<std::string> Eval(std::string_view expr, std::string_view zone = "UTC") const {
    ExpressionOptions options;
    options.time_zone = std::string(zone);
    options.now = [] { return int64_t{1700000000123456}; };
    Result<std::unique_ptr<Expression>> e = Expression::Compile(expr, *schema_, options);
    if (!e.ok()) {
      return {"ERROR: " + e.status().message()};
    }
    std::unique_ptr<columnar::Column> col = (*e)->Evaluate(batch_);
    EXPECT_EQ(col->length(), batch_.num_rows());
    EXPECT_TRUE(col->type()->Equals(*(*e)->type())) << expr;
    std::vector<std::string> out;
    for (int64_t i = 0; i < col->length(); i++) {
      out.push_back(CellText(*col, i));
    }
    return out;
  }

 private:
  columnar::SchemaPtr schema_;
  columnar::RecordBatch batch_;
};

// One row with one unused column: for expressions of literals.
std::string Eval1(std::string_view expr, std::string_view zone = "UTC") {
  static const Table* one = new Table("unused INT", {"{}"});
  return one->Eval(expr, zone)[0];
}

TEST(ExpressionTest, TheDateOnlyColumnOfIssue6) {
  Table t("dateTime STRING", {R"({"dateTime": "11/30/2026 - 07:10:00 +0000"})",
                              R"({"dateTime": "01/01/2027 - 01:30:00 +0200"})",  // Dec 31 in UTC
                              R"({"dateTime": "02/30/2026 - 07:10:00 +0000"})",  // no Feb 30: NULL
                              R"({"dateTime": "11/30/2026 07:10:00 +0000"})",    // malformed: NULL
                              R"({"dateTime": null})", R"({"dateTime": ""})"});
  const char* expr =
      "from_unixtime(unix_timestamp(dateTime, 'MM/dd/yyyy - HH:mm:ss Z'), 'MM/dd/yyyy')";
  EXPECT_EQ(t.Eval(expr), (std::vector<std::string>{"\"11/30/2026\"", "\"12/31/2026\"", "null",
                                                    "null", "null", "null"}));
  // The output is formatted in the session zone.
  EXPECT_EQ(t.Eval(expr, "Asia/Tokyo")[1], "\"01/01/2027\"");
  EXPECT_EQ(t.Eval("unix_timestamp(dateTime, 'MM/dd/yyyy - HH:mm:ss Z')")[0], "1796022600");
  EXPECT_EQ(t.Eval("unix_timestamp(DATETIME, 'MM/dd/yyyy - HH:mm:ss Z')")[1], "1798759800");
}

TEST(ExpressionTest, SparkDatetimeExamples) {
  // Spark: from_unixtime, unix_timestamp, to_unix_timestamp, to_timestamp, to_date, date_format.
  EXPECT_EQ(Eval1("from_unixtime(0, 'yyyy-MM-dd HH:mm:ss')", kLA), "\"1969-12-31 16:00:00\"");
  EXPECT_EQ(Eval1("from_unixtime(0)", kLA), "\"1969-12-31 16:00:00\"");
  EXPECT_EQ(Eval1("unix_timestamp('2016-04-08', 'yyyy-MM-dd')", kLA), "1460098800");
  EXPECT_EQ(Eval1("to_unix_timestamp('2016-04-08', 'yyyy-MM-dd')", kLA), "1460098800");
  EXPECT_EQ(Eval1("CAST(to_timestamp('2016-12-31 00:12:00') AS STRING)", kLA),
            "\"2016-12-31 00:12:00\"");
  EXPECT_EQ(Eval1("CAST(to_timestamp('2016-12-31', 'yyyy-MM-dd') AS STRING)", kLA),
            "\"2016-12-31 00:00:00\"");
  EXPECT_EQ(Eval1("to_timestamp('foo', 'yyyy-MM-dd')", kLA), "null");
  EXPECT_EQ(Eval1("to_date('2009-07-30 04:17:52')", kLA), "2009-07-30");
  EXPECT_EQ(Eval1("to_date('2016-12-31', 'yyyy-MM-dd')", kLA), "2016-12-31");
  EXPECT_EQ(Eval1("date_format('2016-04-08', 'y')", kLA), "\"2016\"");
  // Spark: date_trunc and trunc.
  EXPECT_EQ(Eval1("CAST(date_trunc('YEAR', '2015-03-05T09:32:05.359') AS STRING)", kLA),
            "\"2015-01-01 00:00:00\"");
  EXPECT_EQ(Eval1("CAST(date_trunc('MM', '2015-03-05T09:32:05.359') AS STRING)", kLA),
            "\"2015-03-01 00:00:00\"");
  EXPECT_EQ(Eval1("CAST(date_trunc('DD', '2015-03-05T09:32:05.359') AS STRING)", kLA),
            "\"2015-03-05 00:00:00\"");
  EXPECT_EQ(Eval1("CAST(date_trunc('HOUR', '2015-03-05T09:32:05.359') AS STRING)", kLA),
            "\"2015-03-05 09:00:00\"");
  EXPECT_EQ(Eval1("CAST(date_trunc('MILLISECOND', '2015-03-05T09:32:05.123456') AS STRING)", kLA),
            "\"2015-03-05 09:32:05.123\"");
  EXPECT_EQ(Eval1("trunc('2019-08-04', 'week')"), "2019-07-29");
  EXPECT_EQ(Eval1("trunc('2019-08-04', 'quarter')"), "2019-07-01");
  EXPECT_EQ(Eval1("trunc('2009-02-12', 'MM')"), "2009-02-01");
  EXPECT_EQ(Eval1("trunc('2015-10-27', 'YEAR')"), "2015-01-01");
  EXPECT_EQ(Eval1("trunc('2015-10-27', 'HOUR')"), "null");
  // Spark: the field functions.
  EXPECT_EQ(Eval1("year('2016-07-30')"), "2016");
  EXPECT_EQ(Eval1("month('2016-07-30')"), "7");
  EXPECT_EQ(Eval1("day('2009-07-30')"), "30");
  EXPECT_EQ(Eval1("dayofmonth('2009-07-30')"), "30");
  EXPECT_EQ(Eval1("quarter('2016-08-31')"), "3");
  EXPECT_EQ(Eval1("dayofweek('2009-07-30')"), "5");
  EXPECT_EQ(Eval1("dayofyear('2016-04-09')"), "100");
  EXPECT_EQ(Eval1("hour('2009-07-30 12:58:59')"), "12");
  EXPECT_EQ(Eval1("minute('2009-07-30 12:58:59')"), "58");
  EXPECT_EQ(Eval1("second('2009-07-30 12:58:59')"), "59");
}

TEST(ExpressionTest, TimeZonesNullsAndMalformedDates) {
  Table t("ts TIMESTAMP, s STRING",
          {R"({"ts": "2026-07-01T12:00:00Z", "s": "2026-07-01 14:00"})",
           R"({"ts": null, "s": "not a date"})", R"({"ts": "2026-01-01T00:30:00Z", "s": null})"});
  EXPECT_EQ(t.Eval("hour(ts)", "Europe/Paris"), (std::vector<std::string>{"14", "null", "1"}));
  EXPECT_EQ(t.Eval("date_format(ts, 'yyyy-MM-dd HH:mm XXX')", "Europe/Paris"),
            (std::vector<std::string>{"\"2026-07-01 14:00 +02:00\"", "null",
                                      "\"2026-01-01 01:30 +01:00\""}));
  EXPECT_EQ(t.Eval("to_date(ts)", kLA),
            (std::vector<std::string>{"2026-07-01", "null", "2025-12-31"}));
  // A wall-clock string is read in the session zone.
  EXPECT_EQ(t.Eval("unix_timestamp(s, 'yyyy-MM-dd HH:mm')", "Europe/Paris"),
            (std::vector<std::string>{"1782907200", "null", "null"}));
  EXPECT_EQ(t.Eval("to_timestamp(s)", "Europe/Paris"),
            (std::vector<std::string>{"2026-07-01T12:00:00", "null", "null"}));
  EXPECT_EQ(t.Eval("ts = to_timestamp(s, 'yyyy-MM-dd HH:mm')", "Europe/Paris"),
            (std::vector<std::string>{"true", "null", "null"}));
  EXPECT_EQ(Eval1("CAST(current_timestamp() AS STRING)"), "\"2023-11-14 22:13:20.123456\"");
  EXPECT_EQ(Eval1("current_date", "Asia/Tokyo"), "2023-11-15");
  EXPECT_EQ(Eval1("unix_timestamp()"), "1700000000");
}

TEST(ExpressionTest, SparkStringExamples) {
  EXPECT_EQ(Eval1("concat('Spark', 'SQL')"), "\"SparkSQL\"");
  EXPECT_EQ(Eval1("'Spark' || 'SQL' || 1"), "\"SparkSQL1\"");
  EXPECT_EQ(Eval1("concat('a', NULL)"), "null");
  EXPECT_EQ(Eval1("concat_ws(' ', 'Spark', 'SQL')"), "\"Spark SQL\"");
  EXPECT_EQ(Eval1("concat_ws('s')"), "\"\"");
  EXPECT_EQ(Eval1("concat_ws(',', 'a', NULL, 'b')"), "\"a,b\"");
  EXPECT_EQ(Eval1("concat_ws('-', split('a b c', ' '), 'd')"), "\"a-b-c-d\"");
  EXPECT_EQ(Eval1("substr('Spark SQL', 5)"), "\"k SQL\"");
  EXPECT_EQ(Eval1("substr('Spark SQL', -3)"), "\"SQL\"");
  EXPECT_EQ(Eval1("substr('Spark SQL', 5, 1)"), "\"k\"");
  EXPECT_EQ(Eval1("substring('Spark SQL' FROM 5)"), "\"k SQL\"");
  EXPECT_EQ(Eval1("substring('Spark SQL' FROM -3)"), "\"SQL\"");
  EXPECT_EQ(Eval1("substring('Spark SQL' FROM 5 FOR 1)"), "\"k\"");
  EXPECT_EQ(Eval1("substr('héllo', 2, 2)"), "\"él\"");
  EXPECT_EQ(Eval1("substr('abc', 0, 2)"), "\"ab\"");
  EXPECT_EQ(Eval1("substr('abc', 5)"), "\"\"");
  EXPECT_EQ(Eval1("lower('SparkSql')"), "\"sparksql\"");
  EXPECT_EQ(Eval1("upper('SparkSql')"), "\"SPARKSQL\"");
  EXPECT_EQ(Eval1("upper('été ÿ')"), "\"ÉTÉ Ÿ\"");
  EXPECT_EQ(Eval1("trim('    SparkSQL   ')"), "\"SparkSQL\"");
  EXPECT_EQ(Eval1("trim(BOTH FROM '    SparkSQL   ')"), "\"SparkSQL\"");
  EXPECT_EQ(Eval1("trim(LEADING FROM '    SparkSQL   ')"), "\"SparkSQL   \"");
  EXPECT_EQ(Eval1("trim(TRAILING FROM '    SparkSQL   ')"), "\"    SparkSQL\"");
  EXPECT_EQ(Eval1("trim('SL' FROM 'SSparkSQLS')"), "\"parkSQ\"");
  EXPECT_EQ(Eval1("trim(BOTH 'SL' FROM 'SSparkSQLS')"), "\"parkSQ\"");
  EXPECT_EQ(Eval1("trim(LEADING 'SL' FROM 'SSparkSQLS')"), "\"parkSQLS\"");
  EXPECT_EQ(Eval1("trim(TRAILING 'SL' FROM 'SSparkSQLS')"), "\"SSparkSQ\"");
  EXPECT_EQ(Eval1("ltrim('    SparkSQL   ')"), "\"SparkSQL   \"");
  EXPECT_EQ(Eval1("rtrim('    SparkSQL   ')"), "\"    SparkSQL\"");
  EXPECT_EQ(Eval1("length('Spark SQL ')"), "10");
  EXPECT_EQ(Eval1("length(x'537061726b2053514c')"), "9");
  EXPECT_EQ(Eval1("char_length('héllo')"), "5");
}

TEST(ExpressionTest, SparkRegexAndSplitExamples) {
  EXPECT_EQ(Eval1("split('oneAtwoBthreeC', '[ABC]')"), "[\"one\", \"two\", \"three\", \"\"]");
  EXPECT_EQ(Eval1("split('oneAtwoBthreeC', '[ABC]', -1)"), "[\"one\", \"two\", \"three\", \"\"]");
  EXPECT_EQ(Eval1("split('oneAtwoBthreeC', '[ABC]', 2)"), "[\"one\", \"twoBthreeC\"]");
  EXPECT_EQ(Eval1("split('abc', 'x')"), "[\"abc\"]");
  EXPECT_EQ(Eval1("regexp_extract('100-200', '(\\\\d+)-(\\\\d+)', 1)"), "\"100\"");
  EXPECT_EQ(Eval1("regexp_extract('100-200', r'(\\d+)-(\\d+)', 2)"), "\"200\"");
  EXPECT_EQ(Eval1("regexp_extract('100-200', r'(\\d+)-(\\d+)', 0)"), "\"100-200\"");
  EXPECT_EQ(Eval1("regexp_extract('100-200', r'(\\d+)-(\\d+)')"), "\"100\"");
  EXPECT_EQ(Eval1("regexp_extract('abc', r'(\\d+)', 1)"), "\"\"");
  EXPECT_EQ(Eval1("regexp_extract('a1', r'(?<num>\\d)', 1)"), "\"1\"");
  EXPECT_EQ(Eval1("regexp_replace('100-200', '(\\\\d+)', 'num')"), "\"num-num\"");
  EXPECT_EQ(Eval1("regexp_replace('100-200', r'(\\d+)', '<$1>')"), "\"<100>-<200>\"");
  EXPECT_EQ(Eval1("regexp_replace('100-200', r'(?<n>\\d+)', '${n}!')"), "\"100!-200!\"");
  EXPECT_EQ(Eval1("regexp_replace('abc', 'x*', '-')"), "\"-a-b-c-\"");
  EXPECT_EQ(Eval1("regexp_replace('aaa', 'a', 'b', 2)"), "\"abb\"");
  EXPECT_EQ(Eval1("regexp_replace('a', 'a', '$2')"), "null");  // no group 2
}

TEST(ExpressionTest, SparkMiscExamples) {
  EXPECT_EQ(Eval1("coalesce(NULL, 1, NULL)"), "1");
  EXPECT_EQ(Eval1("coalesce(NULL, 'a', 2)"), "\"a\"");
  EXPECT_EQ(Eval1("nvl(NULL, 2.5)"), "2.5");
  EXPECT_EQ(Eval1("if(1 < 2, 'a', 'b')"), "\"a\"");
  EXPECT_EQ(Eval1("nullif(2, 2)"), "null");
  EXPECT_EQ(Eval1("get_json_object('{\"a\":\"b\"}', '$.a')"), "\"b\"");
  EXPECT_EQ(Eval1("get_json_object('{\"a\":{\"b\":[1,2.5,{\"c\":null}]}}', '$.a.b[1]')"),
            "\"2.5\"");
  EXPECT_EQ(Eval1("get_json_object('{\"a\":{\"b\": [1, 2]}}', '$.a')"), "\"{\\\"b\\\":[1,2]}\"");
  EXPECT_EQ(Eval1("get_json_object('{\"a\":{\"b\":[1,2]}}', \"$['a'].b[0]\")"), "\"1\"");
  EXPECT_EQ(Eval1("get_json_object('{\"a\":[{\"x\":1},{\"x\":2}]}', '$.a[*].x')"), "\"[1,2]\"");
  EXPECT_EQ(Eval1("get_json_object('{\"a\":null}', '$.a')"), "null");
  EXPECT_EQ(Eval1("get_json_object('{\"a\":1}', '$.b')"), "null");
  EXPECT_EQ(Eval1("get_json_object('{\"a\":', '$.a')"), "null");
  EXPECT_EQ(Eval1("md5('Spark')"), "\"8cde774d6f7333752ed72cacddb05126\"");
  EXPECT_EQ(Eval1("sha2('Spark', 256)"),
            "\"529bc3b07127ecb7e53a4dcf1991d9152c24537d919178022b2c42657f79a26b\"");
  EXPECT_EQ(Eval1("sha2('Spark', 0)"),
            "\"529bc3b07127ecb7e53a4dcf1991d9152c24537d919178022b2c42657f79a26b\"");
  EXPECT_EQ(Eval1("sha2('Spark', 224)"),
            "\"dbeab94971678d36af2195851c0f7485775a2a7c60073d62fc04549c\"");
  EXPECT_EQ(Eval1("sha2('Spark', 1)"), "null");
  EXPECT_EQ(Eval1("sha1('Spark')"), "\"85f5955f4b27a9a4c2aab6ffe5d7189fc298b92c\"");
  EXPECT_EQ(Eval1("md5(NULL)"), "null");
}

TEST(ExpressionTest, ArithmeticAndCasts) {
  EXPECT_EQ(Eval1("1 + 2 * 3 - -4"), "11");
  EXPECT_EQ(Eval1("2147483647 + 1"), "-2147483648");  // non-ANSI: wraps
  // Found by expression_fuzzer: SMALLINT and TINYINT products were computed in (signed) int
  // after promotion, and 65534 * 65534 overflowed (UB). They wrap like Java's short and byte.
  EXPECT_EQ(Eval1("-2S * -2S"), "4");
  EXPECT_EQ(Eval1("32767S * 2S"), "-2");
  EXPECT_EQ(Eval1("CAST(-32768 AS SMALLINT) * CAST(-32768 AS SMALLINT)"), "0");
  EXPECT_EQ(Eval1("CAST(-128 AS TINYINT) * -1Y"), "-128");
  EXPECT_EQ(Eval1("3 / 2"), "1.5");
  EXPECT_EQ(Eval1("3 div 2"), "1");
  EXPECT_EQ(Eval1("1 / 0"), "null");
  EXPECT_EQ(Eval1("5 % 0"), "null");
  EXPECT_EQ(Eval1("-7 % 3"), "-1");
  EXPECT_EQ(Eval1("0.1 + 0.2"), "0.3");
  EXPECT_EQ(Eval1("1.10 * 3"), "3.30");
  EXPECT_EQ(Eval1("CAST(1 AS DECIMAL(10,2)) / 3"), "0.3333333333333");
  EXPECT_EQ(Eval1("'1' + 1"), "2");
  EXPECT_EQ(Eval1("2L * 3S + 1Y"), "7");
  EXPECT_EQ(Eval1("1.5e1 + 1D"), "16");
  EXPECT_EQ(Eval1("CAST('42' AS INT)"), "42");
  EXPECT_EQ(Eval1("CAST(' 4.7 ' AS INT)"), "4");
  EXPECT_EQ(Eval1("CAST('abc' AS INT)"), "null");
  EXPECT_EQ(Eval1("CAST('99999999999' AS INT)"), "null");
  EXPECT_EQ(Eval1("CAST(3.7 AS INT)"), "3");
  EXPECT_EQ(Eval1("CAST(-3.7D AS INT)"), "-3");
  EXPECT_EQ(Eval1("CAST(1e20D AS INT)"), "2147483647");  // Java: saturates
  EXPECT_EQ(Eval1("CAST(300 AS TINYINT)"), "44");        // Java: wraps
  EXPECT_EQ(Eval1("CAST(1.5 AS STRING)"), "\"1.5\"");
  EXPECT_EQ(Eval1("CAST(1.0D AS STRING)"), "\"1.0\"");
  EXPECT_EQ(Eval1("CAST(1e10D AS STRING)"), "\"1.0E10\"");
  EXPECT_EQ(Eval1("CAST(0.0001D AS STRING)"), "\"1.0E-4\"");
  EXPECT_EQ(Eval1("CAST(true AS INT)"), "1");
  EXPECT_EQ(Eval1("CAST('yes' AS BOOLEAN)"), "true");
  EXPECT_EQ(Eval1("CAST('maybe' AS BOOLEAN)"), "null");
  EXPECT_EQ(Eval1("CAST('2020-01-01' AS DATE)"), "2020-01-01");
  EXPECT_EQ(Eval1("CAST(TIMESTAMP '2020-01-01 23:00:00' AS DATE)", kLA), "2020-01-01");
  EXPECT_EQ(Eval1("CAST(0 AS TIMESTAMP)"), "1970-01-01T00:00:00");
  EXPECT_EQ(Eval1("CAST(TIMESTAMP '1970-01-01 00:00:01.5' AS BIGINT)"), "1");
  EXPECT_EQ(Eval1("CAST(TIMESTAMP '1969-12-31 23:59:59.5' AS BIGINT)"), "-1");
  EXPECT_EQ(Eval1("CAST('12.345' AS DECIMAL(4,2))"), "12.35");
  EXPECT_EQ(Eval1("CAST(12345 AS DECIMAL(3,0))"), "null");
  EXPECT_EQ(Eval1("CAST(DATE '2020-02-29' AS TIMESTAMP)", kLA), "2020-02-29T08:00:00");
  EXPECT_EQ(Eval1("CAST(X'4142' AS STRING)"), "\"AB\"");
  EXPECT_EQ(Eval1("CAST(NULL AS INT)"), "null");
}

TEST(ExpressionTest, ComparisonsLogicAndPredicates) {
  EXPECT_EQ(Eval1("1 = 1.0"), "true");
  EXPECT_EQ(Eval1("'10' > 9"), "true");  // the string is compared as a number
  EXPECT_EQ(Eval1("'abc' < 'abd'"), "true");
  EXPECT_EQ(Eval1("NULL = NULL"), "null");
  EXPECT_EQ(Eval1("NULL <=> NULL"), "true");
  EXPECT_EQ(Eval1("1 <=> NULL"), "false");
  EXPECT_EQ(Eval1("CAST('NaN' AS DOUBLE) = CAST('NaN' AS DOUBLE)"), "true");
  EXPECT_EQ(Eval1("CAST('NaN' AS DOUBLE) > 1e308D"), "true");
  EXPECT_EQ(Eval1("NULL AND false"), "false");
  EXPECT_EQ(Eval1("NULL AND true"), "null");
  EXPECT_EQ(Eval1("NULL OR true"), "true");
  EXPECT_EQ(Eval1("NOT NULL"), "null");
  EXPECT_EQ(Eval1("!(1 > 2) AND 2 >= 2 AND 1 != 2 AND 1 <> 2"), "true");
  EXPECT_EQ(Eval1("1 IN (1, 2)"), "true");
  EXPECT_EQ(Eval1("3 IN (1, NULL)"), "null");
  EXPECT_EQ(Eval1("3 NOT IN (1, 2)"), "true");
  EXPECT_EQ(Eval1("'b' IN ('a', 'b')"), "true");
  EXPECT_EQ(Eval1("2 BETWEEN 1 AND 3"), "true");
  EXPECT_EQ(Eval1("5 NOT BETWEEN 1 AND 3"), "true");
  EXPECT_EQ(Eval1("'Spark' LIKE 'Sp%'"), "true");
  EXPECT_EQ(Eval1("'Spark' LIKE '_park'"), "true");
  EXPECT_EQ(Eval1("'Spark' NOT LIKE 'S_k'"), "true");
  EXPECT_EQ(Eval1("'50%' LIKE '50\\\\%'"), "true");
  EXPECT_EQ(Eval1("NULL IS NULL"), "true");
  EXPECT_EQ(Eval1("1 IS NOT NULL"), "true");
  EXPECT_EQ(Eval1("CASE WHEN 1 > 2 THEN 'a' WHEN 2 > 1 THEN 'b' ELSE 'c' END"), "\"b\"");
  EXPECT_EQ(Eval1("CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' END"), "\"two\"");
  EXPECT_EQ(Eval1("CASE WHEN false THEN 1 END"), "null");
  EXPECT_EQ(Eval1("CASE WHEN true THEN 1 ELSE 2.5 END"), "1.0");
  EXPECT_EQ(Eval1("NULL"), "null");
}

TEST(ExpressionTest, ColumnsNestedFieldsAndMetadata) {
  Table t(
      "_offset BIGINT, `odd name` STRING, loc STRUCT<lat: DOUBLE, lon: DOUBLE>, "
      "tags ARRAY<STRING>, attrs MAP<STRING, INT>, msg STRUCT<inner: STRUCT<id: STRING>>",
      {R"({"_offset": 7, "odd name": "x", "loc": {"lat": 1.5, "lon": 2}, "tags": ["a", "b"],
          "attrs": {"k": 1, "j": 2}, "msg": {"inner": {"id": "m1"}}})",
       R"({"_offset": 8, "loc": null, "tags": [], "attrs": {}, "msg": {"inner": null}})"});
  EXPECT_EQ(t.Eval("_offset + 1"), (std::vector<std::string>{"8", "9"}));
  EXPECT_EQ(t.Eval("`odd name`"), (std::vector<std::string>{"\"x\"", "null"}));
  EXPECT_EQ(t.Eval("loc.lat + loc.lon"), (std::vector<std::string>{"3.5", "null"}));
  EXPECT_EQ(t.Eval("LOC.Lat"), (std::vector<std::string>{"1.5", "null"}));
  EXPECT_EQ(t.Eval("tags[1]"), (std::vector<std::string>{"\"b\"", "null"}));
  EXPECT_EQ(t.Eval("tags[5]"), (std::vector<std::string>{"null", "null"}));
  EXPECT_EQ(t.Eval("attrs['j']"), (std::vector<std::string>{"2", "null"}));
  EXPECT_EQ(t.Eval("msg.inner.id"), (std::vector<std::string>{"\"m1\"", "null"}));
  EXPECT_EQ(t.Eval("concat(msg.inner.id, '-', _offset)"),
            (std::vector<std::string>{"\"m1-7\"", "null"}));
  EXPECT_EQ(t.Eval("loc"), (std::vector<std::string>{"{lat: 1.5, lon: 2}", "null"}));
  EXPECT_EQ(t.Eval("coalesce(loc.lat, -1)"), (std::vector<std::string>{"1.5", "-1"}));
}

TEST(ExpressionTest, LiteralsAndOtherColumnTypes) {
  EXPECT_EQ(Eval1("12L"), "12");
  EXPECT_EQ(Eval1("CAST(9999999999 AS STRING)"), "\"9999999999\"");
  EXPECT_EQ(Eval1("123456789012345678901234567890"), "123456789012345678901234567890");
  EXPECT_EQ(Eval1("1.50BD * 2"), "3.00");
  EXPECT_EQ(Eval1("1.5F + 1"), "2.5");
  EXPECT_EQ(Eval1("'a' 'b' \"c\""), "\"abc\"");
  EXPECT_EQ(Eval1("'it\\'s ' || '\\u00e9'"), "\"it's é\"");
  EXPECT_EQ(Eval1("12Q"), "ERROR: expr:1:3: unknown number suffix 'Q'");
  EXPECT_EQ(Eval1("300Y"), "ERROR: expr:1:1: number 300Y does not fit TINYINT");
  EXPECT_EQ(Eval1("X'4G'"), "ERROR: expr:1:2: bad hex digit in binary literal");
  Table t("ms TIMESTAMP_MILLIS, u UINT32",
          {R"({"ms": "2026-11-30T07:10:00.123Z", "u": 4000000000})"});
  EXPECT_EQ(t.Eval("CAST(ms AS STRING)"),
            (std::vector<std::string>{"\"2026-11-30 07:10:00.123\""}));
  EXPECT_EQ(t.Eval("date_format(ms, 'SSS')"), (std::vector<std::string>{"\"123\""}));
  EXPECT_EQ(t.Eval("u + 1"), (std::vector<std::string>{"4000000001"}));
}

TEST(ExpressionTest, CompileErrorsPointAtTheColumn) {
  Table t("id BIGINT, dateTime STRING", {});
  EXPECT_EQ(t.Eval("unix_timestamp(dateTim, 'x')")[0],
            "ERROR: expr:1:16: unknown column 'dateTim' (columns: id, dateTime)");
  EXPECT_EQ(t.Eval("concat(id,")[0],
            "ERROR: expr:1:11: expected an expression, found end of input");
  EXPECT_EQ(t.Eval("id +")[0], "ERROR: expr:1:5: expected an expression, found end of input");
  EXPECT_EQ(t.Eval("nosuch(id)")[0], "ERROR: expr:1:1: unknown function 'nosuch'");
  EXPECT_EQ(t.Eval("substr(id)")[0], "ERROR: expr:1:1: substr takes 2 to 3 arguments, not 1");
  EXPECT_EQ(t.Eval("id AND true")[0], "ERROR: expr:1:1: and needs BOOLEAN operands, not BIGINT");
  EXPECT_EQ(t.Eval("CAST(id AS INTEGR)")[0],
            "ERROR: expr:1:11: bad type in CAST (type:1:2: unknown type 'INTEGR')");
  EXPECT_EQ(t.Eval("date_format(dateTime, 'YYYY-ww')")[0],
            "ERROR: expr:1:23: datetime pattern 'YYYY-ww': letter 'Y' at 1: week-based patterns "
            "are not supported (as in Spark 3)");
  EXPECT_EQ(t.Eval("regexp_extract(dateTime, '(a', 1)")[0],
            "ERROR: expr:1:26: invalid regular expression '(a': missing ): (a");
  EXPECT_EQ(t.Eval("'abc")[0], "ERROR: expr:1:1: unterminated string");
  EXPECT_EQ(t.Eval("id\n  + 'x' +")[0],
            "ERROR: expr:2:10: expected an expression, found end of input");
  EXPECT_EQ(t.Eval("DATE '2020-13-01'")[0], "ERROR: expr:1:1: invalid DATE literal '2020-13-01'");
  EXPECT_EQ(t.Eval("id = DATE '2020-01-01'")[0],
            "ERROR: expr:1:4: cannot compare BIGINT with DATE");
  EXPECT_EQ(t.Eval("id id")[0],
            "ERROR: expr:1:4: expected an operator or end of input, found 'id'");
  std::string deep(1000, '(');
  EXPECT_NE(t.Eval(deep + "1" + std::string(1000, ')'))[0].find("nested deeper than 200"),
            std::string::npos);
}

TEST(ExpressionTest, NullabilityOfResults) {
  columnar::Schema schema = *columnar::ParseDdlSchema("id INT NOT NULL, s STRING NOT NULL, n INT");
  auto nullable = [&](std::string_view text) {
    return (*Expression::Compile(text, schema))->nullable();
  };
  EXPECT_FALSE(nullable("id + 1"));
  EXPECT_FALSE(nullable("id * 2.5D"));
  EXPECT_FALSE(nullable("concat(s, '-', id)"));
  EXPECT_FALSE(nullable("coalesce(n, 0)"));
  EXPECT_FALSE(nullable("n IS NULL"));
  EXPECT_TRUE(nullable("n + 1"));
  EXPECT_TRUE(nullable("id / 2"));  // division by zero
  EXPECT_TRUE(nullable("s + 1"));   // the string may not be a number
  EXPECT_TRUE(nullable("unix_timestamp(s, 'yyyy')"));
  EXPECT_TRUE(nullable("CASE WHEN id > 1 THEN s END"));
}

// Random token soup must compile or fail cleanly, never crash or hang.
TEST(ExpressionTest, GarbageNeverCrashes) {
  static const char* kTokens[] = {
      "a",   "b.c",         "1",      "'x'",    "(",       ")",    ",",    "+",    "-",    "*",
      "/",   "=",           "AND",    "NOT",    "CASE",    "WHEN", "THEN", "END",  "IN",   "CAST",
      "AS",  "INT",         "concat", "substr", "[",       "]",    "NULL", "IS",   "1.5",  "x'4'",
      "`q`", "date_format", "'yyyy'", "||",     "BETWEEN", "LIKE", "trim", "FROM", "split"};
  Table t("a INT, b STRUCT<c: STRING>, q STRING", {R"({"a": 1, "b": {"c": "x"}, "q": "y"})"});
  std::mt19937 rng(3);
  int compiled = 0;
  for (int iter = 0; iter < 3000; iter++) {
    std::string text;
    for (size_t n = rng() % 12; n > 0; n--) {
      text += kTokens[rng() % (sizeof(kTokens) / sizeof(kTokens[0]))];
      text += ' ';
    }
    std::vector<std::string> out = t.Eval(text);
    ASSERT_EQ(out.size(), 1u) << text;
    compiled += out[0].rfind("ERROR: ", 0) == 0 ? 0 : 1;
  }
  EXPECT_GT(compiled, 10);
}

TEST(ExpressionTest, ManyRowsWithNulls) {
  std::vector<std::string> rows;
  for (int i = 0; i < 1000; i++) {
    rows.push_back(i % 7 == 0 ? R"({"n": null, "s": null})"
                              : fmt::format(R"({{"n": {}, "s": "v{}"}})", i, i));
  }
  Table t("n INT, s STRING", rows);
  std::vector<std::string> out =
      t.Eval("CASE WHEN n % 2 = 0 THEN upper(s) ELSE concat(s, '!') END");
  ASSERT_EQ(out.size(), 1000u);
  for (int i = 0; i < 1000; i++) {
    std::string want = i % 7 == 0   ? "null"
                       : i % 2 == 0 ? fmt::format("\"V{}\"", i)
                                    : fmt::format("\"v{}!\"", i);
    ASSERT_EQ(out[static_cast<size_t>(i)], want) << i;
  }
  // A `where` filter keeps the rows whose condition is true (NULL counts as false).
  columnar::Schema schema = *columnar::ParseDdlSchema("n INT, s STRING");
  std::unique_ptr<Expression> where = std::move(*Expression::Compile("n > 990", schema));
  EXPECT_EQ(where->type()->id(), columnar::TypeId::kBoolean);
  EXPECT_TRUE(where->nullable());
  auto flags = columnar::MakeColumn(columnar::DataType::Boolean());
  for (int v : {1, 0, 1}) {
    flags->As<columnar::BooleanColumn>()->Append(static_cast<uint8_t>(v));
  }
  flags->AppendNull();
  EXPECT_EQ(Expression::TrueRows(*flags), (std::vector<int64_t>{0, 2}));
}

}  // namespace
}  // namespace ferry::transform
