#include "ferry/app/routed_status.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "ferry/pipeline/router.h"

namespace ferry::app {
namespace {

constexpr std::string_view kResumeSuffix = "/resume";

// The partition key of one of pipeline `id`'s appIds, with whether it is a resume position;
// nullopt for another pipeline's appId and for the positions table's table records.
std::optional<std::pair<std::string, bool>> PartitionOf(const std::string& id,
                                                        const std::string& app_id) {
  const std::string prefix = id + "/";
  if (!app_id.starts_with(prefix) ||
      app_id.starts_with(pipeline::RoutingLedger::TableAppId(id, ""))) {
    return std::nullopt;
  }
  std::string key = app_id.substr(prefix.size());
  const bool resume = key.ends_with(kResumeSuffix);
  if (resume) {
    key.resize(key.size() - kResumeSuffix.size());
  }
  if (key.empty()) {
    return std::nullopt;
  }
  return std::make_pair(key, resume);
}

}  // namespace

std::vector<std::string> StaticRoutedTables(const config::PipelineConfig& c) {
  std::vector<std::string> out;
  if (c.table_is_template) {
    if (!c.table_name_rules.fallback.empty()) {
      out.push_back(c.table_name_rules.fallback);
    }
  }
  for (const config::RouteConfig& route : c.routes) {
    out.push_back(route.table);
  }
  return out;
}

std::vector<std::string> RoutedTableList(const std::vector<std::string>& statics,
                                         const std::vector<std::string>& recorded) {
  std::set<std::string> all(statics.begin(), statics.end());
  all.insert(recorded.begin(), recorded.end());
  return {all.begin(), all.end()};
}

std::vector<RoutedStatusRow> RoutedStatusRows(const RoutedStatusInput& in) {
  // Every partition anything knows of, with its L: the largest resume position anywhere.
  std::map<std::string, std::optional<int64_t>> resume;
  auto note = [&](const std::map<std::string, int64_t>& txns) {
    for (const auto& [app_id, version] : txns) {
      std::optional<std::pair<std::string, bool>> p = PartitionOf(in.id, app_id);
      if (!p) {
        continue;
      }
      std::optional<int64_t>& low = resume[p->first];
      if (p->second && (!low || version > *low)) {
        low = version;
      }
    }
  };
  note(in.positions_txns);
  for (const auto& [table, txns] : in.tables) {
    if (txns) {
      note(*txns);
    }
  }
  std::map<std::string, const source::PartitionHead*> heads;
  for (const source::PartitionHead& h : in.heads) {
    heads[h.key] = &h;
    resume.try_emplace(h.key);
  }

  std::vector<RoutedStatusRow> rows;
  for (const auto& entry : in.tables) {
    const std::string& table = entry.first;
    const std::optional<std::map<std::string, int64_t>>& txns = entry.second;
    auto position_of = [&](const std::string& key) -> std::optional<int64_t> {
      if (!txns) {
        return std::nullopt;
      }
      auto it = txns->find(in.id + "/" + key);
      return it == txns->end() ? std::nullopt : std::optional<int64_t>(it->second);
    };
    const bool holds_any = std::any_of(resume.begin(), resume.end(), [&](const auto& p) {
      return position_of(p.first).has_value();
    });
    for (const auto& [key, low] : resume) {
      RoutedStatusRow row{.table = table,
                          .partition = key,
                          .app_id = in.id + "/" + key,
                          .position = position_of(key),
                          .resume = low};
      if (holds_any && !row.position) {
        continue;
      }
      auto head = heads.find(key);
      if (head != heads.end()) {
        const source::PartitionHead& h = *head->second;
        row.head = h.last_position;
        std::optional<int64_t> known = row.position;
        if (low && (!known || *low > *known)) {
          known = low;
        }
        if (known) {
          row.lag = std::max<int64_t>(0, h.last_position.value_or(*known) - *known);
        } else if (h.last_position && h.first_position) {
          row.lag = *h.last_position - *h.first_position + 1;
        } else {
          row.lag = 0;
        }
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace ferry::app
