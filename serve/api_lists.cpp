// serve/api_lists.cpp — pure-serve's list pages: GET /v1/NAME/lists/LIST, a stored list's
// rows a page at a time from the latest visible snapshot, its query string (limit, after, ...)
// percent-decoded and checked here (Api::list_page, api.h).
#include <tuple>

#include "serve/api.h"

#include <boost/json.hpp>

#include "runtime/text.h"
#include "stdlib/numtext.h"
#include "serve/api_internal.h"

namespace pure::serve {

namespace json = boost::json;
using Kind = ir::ValueType::Kind;

namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool percent_decode(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return false;
      int h = hex(in[i + 1]), l = hex(in[i + 2]);
      if (h < 0 || l < 0) return false;
      out += static_cast<char>(h * 16 + l);
      i += 2;
    } else if (in[i] == '+') {
      out += ' ';
    } else {
      out += in[i];
    }
  }
  return true;
}

Response Api::list_page(const Module& m, std::string_view list, std::string_view query_string,
                        const PastState* past) const {
  // The visible state, read with the lists of the version it is in (a hot upgrade changes them), or
  // a past state, in the schema of the version it was brought to.
  std::shared_ptr<const rt::Snapshot> snap;
  std::shared_ptr<const Module::Running> running;
  if (past) {
    snap = past->snapshot;
    running = past->running;
  } else {
    uint64_t sequence;
    std::tie(snap, sequence) = m.owner()->visible();
    running = m.running_for(m.owner()->program_at(sequence).first);
  }
  const std::vector<ir::ListDesc>& stored = running->stored;
  size_t li = 0;
  while (li < stored.size() && stored[li].name != list) ++li;
  if (li == stored.size()) return error(404, "module " + m.name + " has no stored list '" + std::string(list) + "'");
  const ir::ListDesc& d = stored[li];
  int64_t limit = 100;
  std::string after, prefix;
  bool has_after = false, has_prefix = false;
  if (!query_string.empty()) {
    for (std::string_view kv : split(query_string, '&')) {
      if (kv.empty()) continue;
      size_t eq = kv.find('=');
      std::string key, value;
      if (!percent_decode(kv.substr(0, eq), key) ||
          !percent_decode(eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1), value))
        return error(400, "bad percent-encoding in the query string");
      if (key == "limit") {
        if (!numtext::parse_int(value, limit) || limit < 1 || limit > 1000)
          return error(400, "limit: expected a whole number from 1 to 1000, got '" + value + "'");
      } else if (key == "after") {
        after = value;
        has_after = true;
      } else if (key == "prefix") {
        if (d.sequence) return error(400, "prefix: the sequence " + d.name + " has no key to filter by");
        prefix = value;
        has_prefix = !value.empty();
      } else if (key == "min_seq") {
        // waited for before the page is read (api.cpp)
      } else {
        return error(400, "unknown query parameter '" + key +
                              "': a list page takes limit, after, prefix, as_of and as_of_time (and min_seq: docs/cluster.md)");
      }
    }
  }
  // The key to start after: one key column as written; several as a JSON array; a sequence's
  // position as an int.
  std::vector<rt::Cell> after_key;
  std::vector<rt::Text*> texts;
  struct ReleaseTexts {
    std::vector<rt::Text*>& t;
    ~ReleaseTexts() {
      for (rt::Text* x : t) rt::text_release(x);
    }
  } release{texts};
  std::vector<rt::ColType> key_cols(d.cols.begin(), d.cols.begin() + d.key_count);
  if (d.sequence) key_cols = {rt::ColType::Int};
  if (has_after) {
    auto cell_of = [&](rt::ColType c, const json::value* jv, std::string_view raw, std::string& e) -> rt::Cell {
      int64_t i = 0;
      switch (c) {
        case rt::ColType::Int:
          if (jv ? !jv->is_int64() : !numtext::parse_int(raw, i)) e = "after: expected int";
          return static_cast<rt::Cell>(jv && jv->is_int64() ? jv->get_int64() : i);
        case rt::ColType::Bool:
          if (jv ? !jv->is_bool() : (raw != "true" && raw != "false")) e = "after: expected true or false";
          return jv ? (jv->is_bool() && jv->get_bool()) : raw == "true";
        case rt::ColType::Text: {
          if (jv && !jv->is_string()) e = "after: expected text";
          std::string_view s = jv && jv->is_string() ? std::string_view(jv->get_string().data(), jv->get_string().size()) : raw;
          texts.push_back(rt::text_new(s));
          return reinterpret_cast<rt::Cell>(texts.back());
        }
        case rt::ColType::Num: e = "after: num keys are not supported"; return 0;
      }
      return 0;
    };
    std::string e;
    if (key_cols.size() == 1) {
      after_key.push_back(cell_of(key_cols[0], nullptr, after, e));
    } else {
      boost::system::error_code ec;
      json::value doc = json::parse(after, ec);
      if (ec || !doc.is_array() || doc.get_array().size() != key_cols.size())
        return error(400, "after: the list's key has " + std::to_string(key_cols.size()) +
                              " columns; pass them as a JSON array, e.g. after=[1,\"a\"]");
      for (size_t c = 0; c < key_cols.size() && e.empty(); ++c)
        after_key.push_back(cell_of(key_cols[c], &doc.get_array()[c], "", e));
    }
    if (!e.empty()) return error(400, e + ", got '" + after + "'");
  }

  const rt::ListReader& reader = snap->list(li);
  const rt::ListShape& shape = *running->program->stored_shapes[li];
  std::unique_ptr<rt::Cursor> cursor;
  bool skip_keys = false;  // rows at or before after_key still to be skipped
  if (!has_after) {
    cursor = reader.scan();
  } else if (d.sequence) {
    int64_t p = static_cast<int64_t>(after_key[0]);
    cursor = reader.range(p == std::numeric_limits<int64_t>::max() ? p : p + 1, std::numeric_limits<int64_t>::max());
  } else if (key_cols[0] == rt::ColType::Int && static_cast<int64_t>(after_key[0]) != std::numeric_limits<int64_t>::max()) {
    cursor = reader.range(static_cast<int64_t>(after_key[0]), std::numeric_limits<int64_t>::max());
    skip_keys = true;
  } else {
    cursor = reader.scan();  // no seek by a text key yet: skip from the start
    skip_keys = true;
  }
  std::string out = "{\"list\":";
  append_json_string(out, d.name);
  if (past) out += ",\"as_of\":" + std::to_string(past->sequence);
  out += ",\"count\":" + std::to_string(reader.count()) + ",\"rows\":[";
  int64_t n = 0;
  std::string key_buffer;
  const rt::Cell* last = nullptr;
  int64_t last_position = -1;
  bool more = false;
  for (; cursor->valid(); cursor->next()) {
    const rt::Cell* row = cursor->row();
    if (skip_keys) {
      if (shape.compare_keys(row, after_key.data(), d.key_count) <= 0) continue;
      skip_keys = false;
    }
    if (has_prefix) {
      std::string_view key = first_key_text(d.cols[0], row[0], key_buffer);
      if (key.substr(0, prefix.size()) != prefix) {
        // Text keys are in byte order: past the prefix, no later key has it.
        if (d.cols[0] == rt::ColType::Text && key > std::string_view(prefix)) break;
        continue;
      }
    }
    if (n == limit) {
      more = true;
      break;
    }
    if (n++) out += ',';
    out += '{';
    for (size_t c = 0; c < d.cols.size(); ++c) {
      if (c) out += ',';
      append_json_string(out, d.names[c]);
      out += ':';
      append_column(out, d, c, row[c]);
    }
    out += '}';
    last = row;
    last_position = cursor->position();
  }
  // Int keys beyond the range's end (INT64_MAX itself) are not in range(); they come from prefix.
  if (!more && !d.sequence && has_after && key_cols[0] == rt::ColType::Int &&
      static_cast<int64_t>(after_key[0]) != std::numeric_limits<int64_t>::max()) {
    rt::Cell top = static_cast<rt::Cell>(std::numeric_limits<int64_t>::max());
    for (auto c = reader.prefix(&top, 1); c->valid(); c->next()) {
      const rt::Cell* row = c->row();
      if (has_prefix && first_key_text(d.cols[0], row[0], key_buffer).substr(0, prefix.size()) != prefix) continue;
      if (n == limit) {
        more = true;
        break;
      }
      if (n++) out += ',';
      out += '{';
      for (size_t k = 0; k < d.cols.size(); ++k) {
        if (k) out += ',';
        append_json_string(out, d.names[k]);
        out += ':';
        append_column(out, d, k, row[k]);
      }
      out += '}';
      last = row;
    }
  }
  out += "],\"next\":";
  if (!more || !last) {
    out += "null";
  } else if (d.sequence) {
    append_json_string(out, std::to_string(last_position));
  } else if (d.key_count == 1) {
    std::string k;
    if (d.cols[0] == rt::ColType::Text) k = std::string(reinterpret_cast<const rt::Text*>(last[0])->view());
    else if (d.cols[0] == rt::ColType::Bool) k = last[0] ? "true" : "false";
    else k = std::to_string(static_cast<int64_t>(last[0]));
    append_json_string(out, k);
  } else {
    std::string k = "[";
    for (size_t c = 0; c < d.key_count; ++c) {
      if (c) k += ',';
      append_cell(k, d.cols[c], last[c]);
    }
    append_json_string(out, k + "]");
  }
  out += '}';
  return json_response(200, std::move(out));
}

}  // namespace pure::serve
