// `ferry parquet from-json` end to end: the real binary converts JSON lines, then `ferry parquet
// cat` and DuckDB (tests/duckdb) read the file back, and both must show the values of the input.
// Bad input must fail naming the line, with nothing left under the output name.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using Json = nlohmann::json;

constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";

struct ProcessResult {
  int code = -1;
  std::string out;  // stdout and stderr together
};

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return q + "'";
}

ProcessResult Shell(const std::string& cmd) {
  ProcessResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) {
    return r;
  }
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
    r.out.append(buf, n);
  }
  int rc = pclose(p);
  r.code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return r;
}

std::vector<Json> JsonLines(const std::string& text) {
  std::vector<Json> rows;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      end = text.size();
    }
    if (end > start) {
      rows.push_back(Json::parse(text.substr(start, end - start)));
    }
    start = end + 1;
  }
  return rows;
}

std::vector<Json> Duck(const std::string& sql) {
  ProcessResult r =
      Shell("node " + std::string(FERRY_SOURCE_DIR) + "/tests/duckdb/query.mjs " + Quote(sql));
  EXPECT_EQ(r.code, 0) << r.out;
  return r.code == 0 ? JsonLines(r.out) : std::vector<Json>{};
}

constexpr char kSchema[] =
    "id BIGINT NOT NULL, ts TIMESTAMP, tags ARRAY<STRING>, attrs MAP<STRING,STRING>, "
    "loc STRUCT<lat: DOUBLE, lon: DOUBLE>, amount DECIMAL(12,2), day DATE, qty INT, ok BOOLEAN, "
    "note STRING";

// The input; a blank line and a CRLF line on purpose.
constexpr char kInput[] =
    R"({"id":1,"ts":"2026-01-02T03:04:05.123456Z","tags":["a","b"],"attrs":{"k":"v"},)"
    R"("loc":{"lat":1.5,"lon":-2.25},"amount":12.3,"day":"2026-01-02","qty":7,"ok":true,)"
    R"("note":"hi"})"
    "\n"
    R"({"id":2})"
    "\n\n"
    R"({"id":3,"tags":[],"attrs":{},"loc":{"lat":null,"lon":0},"amount":-0.01,"ok":false,)"
    R"("note":"\u00e9 \"q\"","unknown":[1,2]})"
    "\r\n"
    R"({"id":9223372036854775807,"qty":-5,"ts":"1969-12-31T23:59:59Z","day":"1900-03-01"})"
    "\n";

// What `ferry parquet cat` prints for kInput (parquet_cat_json.h), one object per row.
// What DuckDB reads (the query in the test; BIGINTs print as strings).
const char* const kExpectedDuck[] = {
    R"({"id":"1","ts":"1767323045123456","tags":["a","b"],"attrs":{"k":"v"},)"
    R"("loc":{"lat":1.5,"lon":-2.25},"amount":"12.30","day":"2026-01-02","qty":7,"ok":true,)"
    R"("note":"hi"})",
    R"({"id":"2","ts":null,"tags":null,"attrs":null,"loc":null,"amount":null,"day":null,)"
    R"("qty":null,"ok":null,"note":null})",
    R"({"id":"3","ts":null,"tags":[],"attrs":{},"loc":{"lat":null,"lon":0.0},"amount":"-0.01",)"
    R"("day":null,"qty":null,"ok":false,"note":"é \"q\""})",
    R"({"id":"9223372036854775807","ts":"-1000000","tags":null,"attrs":null,"loc":null,)"
    R"("amount":null,"day":"1900-03-01","qty":-5,"ok":null,"note":null})",
};

const char* const kExpectedCat[] = {
    R"({"id":1,"ts":"2026-01-02T03:04:05.123456Z","tags":["a","b"],"attrs":{"k":"v"},)"
    R"("loc":{"lat":1.5,"lon":-2.25},"amount":12.30,"day":"2026-01-02","qty":7,"ok":true,)"
    R"("note":"hi"})",
    R"({"id":2,"ts":null,"tags":null,"attrs":null,"loc":null,"amount":null,"day":null,)"
    R"("qty":null,"ok":null,"note":null})",
    R"({"id":3,"ts":null,"tags":[],"attrs":{},"loc":{"lat":null,"lon":0},"amount":-0.01,)"
    R"("day":null,"qty":null,"ok":false,"note":"é \"q\""})",
    R"({"id":9223372036854775807,"ts":"1969-12-31T23:59:59Z","tags":null,"attrs":null,)"
    R"("loc":null,"amount":null,"day":"1900-03-01","qty":-5,"ok":null,"note":null})",
};

class ParquetFromJsonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-from-json-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WriteInput(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  ProcessResult FromJson(const std::string& in, const std::string& out,
                         const std::string& extra = "") {
    return Shell(std::string(kFerry) + " parquet from-json --schema " + Quote(kSchema) + " " +
                 extra + " " + Quote(in) + " " + Quote(out));
  }
  // `ferry parquet cat FILE` prints kInput's rows as kExpectedCat has them.
  void ExpectCatShowsTheInput(const std::string& file) {
    ProcessResult cat = Shell(std::string(kFerry) + " parquet cat " + Quote(file));
    ASSERT_EQ(cat.code, 0) << cat.out;
    std::vector<Json> rows = JsonLines(cat.out);
    ASSERT_EQ(rows.size(), std::size(kExpectedCat));
    for (size_t i = 0; i < rows.size(); i++) {
      EXPECT_EQ(rows[i], Json::parse(kExpectedCat[i])) << i;
    }
  }
  std::vector<std::string> DirEntries() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

TEST_F(ParquetFromJsonTest, EveryCodecReadsBackThroughCatAndDuckDb) {
  std::string in = WriteInput("in.jsonl", kInput);
  for (std::string codec : {"zstd", "snappy", "gzip", "lz4_raw", "uncompressed"}) {
    SCOPED_TRACE(codec);
    std::string out = dir_ + "/" + codec + ".parquet";
    ProcessResult r = FromJson(in, out, "--codec " + codec + (codec == "zstd" ? " --level 9" : ""));
    ASSERT_EQ(r.code, 0) << r.out;

    ASSERT_NO_FATAL_FAILURE(ExpectCatShowsTheInput(out));

    // DuckDB reads the same file: nested values through to_json, exact ones as text.
    std::vector<Json> duck = Duck(
        "SELECT id::VARCHAR AS id, epoch_us(ts) AS ts, to_json(tags) AS tags, "
        "to_json(attrs) AS attrs, to_json(loc) AS loc, amount::VARCHAR AS amount, "
        "day::VARCHAR AS day, qty, ok, note FROM read_parquet('" +
        out + "') ORDER BY id");
    ASSERT_EQ(duck.size(), std::size(kExpectedDuck));
    for (size_t i = 0; i < duck.size(); i++) {
      Json row = duck[i];
      for (const char* nested : {"tags", "attrs", "loc"}) {
        if (row[nested].is_string()) {
          row[nested] = Json::parse(row[nested].get<std::string>());
        }
      }
      EXPECT_EQ(row, Json::parse(kExpectedDuck[i])) << i << " " << duck[i].dump();
    }
  }
}

TEST_F(ParquetFromJsonTest, StdinInput) {
  std::string in = WriteInput("in.jsonl", kInput);
  std::string out = dir_ + "/stdin.parquet";
  ProcessResult r = Shell("cat " + Quote(in) + " | " + kFerry + " parquet from-json --schema " +
                          Quote(kSchema) + " - " + Quote(out));
  ASSERT_EQ(r.code, 0) << r.out;
  ProcessResult cat =
      Shell(std::string(kFerry) + " parquet cat " + Quote(out) + " --columns id,qty");
  ASSERT_EQ(cat.code, 0) << cat.out;
  EXPECT_EQ(cat.out,
            "{\"id\":1,\"qty\":7}\n{\"id\":2,\"qty\":null}\n{\"id\":3,\"qty\":null}\n"
            "{\"id\":9223372036854775807,\"qty\":-5}\n");
}

TEST_F(ParquetFromJsonTest, ABadLineFailsNamingItAndLeavesNoFile) {
  std::string in =
      WriteInput("bad.jsonl", std::string(R"({"id":1})") + "\n\n" + R"({"id":2,"qty":"many"})" +
                                  "\n" + R"({"id":3})" + "\n");
  std::string out = dir_ + "/bad.parquet";
  ProcessResult r = FromJson(in, out);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("bad.jsonl:3:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("qty"), std::string::npos) << r.out;
  EXPECT_EQ(DirEntries(), std::vector<std::string>{"bad.jsonl"});

  // Not JSON at all, and a missing NOT NULL field: also named by line.
  WriteInput("bad.jsonl", std::string(R"({"id":1})") + "\n{\"id\":\n");
  r = FromJson(in, out);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("bad.jsonl:2:"), std::string::npos) << r.out;
  WriteInput("bad.jsonl", std::string(R"({"qty":1})") + "\n");
  r = FromJson(in, out);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("bad.jsonl:1:"), std::string::npos) << r.out;
  EXPECT_EQ(DirEntries(), std::vector<std::string>{"bad.jsonl"});

  // An existing output file stays as it was.
  std::ofstream(out) << "old";
  r = FromJson(in, out);
  EXPECT_EQ(r.code, 1) << r.out;
  std::ifstream old(out);
  std::string content((std::istreambuf_iterator<char>(old)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "old");
  EXPECT_EQ(DirEntries(), (std::vector<std::string>{"bad.jsonl", "bad.parquet"}));
}

// The row groups' sizes: what `ferry parquet inspect --json` says of each.
std::vector<int64_t> RowGroupRows(const std::string& file) {
  ProcessResult r = Shell(std::string(kFerry) + " parquet inspect --json " + Quote(file));
  EXPECT_EQ(r.code, 0) << r.out;
  std::vector<int64_t> rows;
  if (r.code == 0) {
    const Json inspected = Json::parse(r.out);
    EXPECT_TRUE(inspected.contains("row_groups")) << r.out;
    for (const Json& g : inspected["row_groups"]) {
      rows.push_back(g["num_rows"].get<int64_t>());
    }
  }
  return rows;
}

TEST_F(ParquetFromJsonTest, RowGroupLimitsCutTheFileAndEveryRowReadsBack) {
  std::string in = WriteInput("in.jsonl", kInput);
  std::string out = dir_ + "/rows.parquet";
  ProcessResult r = FromJson(in, out, "--row-group-rows 3");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(RowGroupRows(out), (std::vector<int64_t>{3, 1}));
  ASSERT_NO_FATAL_FAILURE(ExpectCatShowsTheInput(out));

  // By bytes: 5,000 rows with a row group limit of one byte end a row group after each slice
  // the writer takes; DuckDB reads every row of every row group.
  std::string many;
  for (int i = 1; i <= 5000; i++) {
    many += R"({"id":)" + std::to_string(i) + R"(,"note":"row )" + std::to_string(i) + "\"}\n";
  }
  in = WriteInput("many.jsonl", many);
  out = dir_ + "/bytes.parquet";
  r = FromJson(in, out, "--row-group-bytes 1");
  ASSERT_EQ(r.code, 0) << r.out;
  std::vector<int64_t> groups = RowGroupRows(out);
  EXPECT_GT(groups.size(), 2u);
  int64_t total = 0;
  for (int64_t g : groups) {
    total += g;
  }
  EXPECT_EQ(total, 5000);
  std::vector<Json> duck = Duck(
      "SELECT count(*)::VARCHAR AS n, sum(id)::VARCHAR AS s, count(DISTINCT note)::VARCHAR AS d "
      "FROM read_parquet('" +
      out + "')");
  ASSERT_EQ(duck.size(), 1u);
  EXPECT_EQ(duck[0], Json::parse(R"({"n":"5000","s":"12502500","d":"5000"})"));
}

TEST_F(ParquetFromJsonTest, BadUsageExitsWithTwo) {
  std::string in = WriteInput("in.jsonl", kInput);
  std::string out = dir_ + "/x.parquet";
  ProcessResult r = Shell(std::string(kFerry) + " parquet from-json --schema 'id BIGINT,' " +
                          Quote(in) + " " + Quote(out));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--schema:1:"), std::string::npos) << r.out;
  r = FromJson(in, out, "--codec lzo2");
  EXPECT_EQ(r.code, 2) << r.out;
  r = FromJson(in, out, "--codec snappy --level 3");
  EXPECT_EQ(r.code, 2) << r.out;
  r = FromJson(in, out, "--row-group-bytes lots");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--row-group-bytes"), std::string::npos) << r.out;
  r = FromJson(in, out, "--row-group-rows 0");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--row-group-rows"), std::string::npos) << r.out;
  EXPECT_EQ(DirEntries(), std::vector<std::string>{"in.jsonl"});
}

}  // namespace
