// lsp/server.cpp — see lsp.h. The framing (Content-Length headers), JSON-RPC (requests,
// notifications, error replies) and the protocol's messages, answered from lsp/analysis.h.
// Boost.JSON is confined to this file.
#include "lsp/lsp.h"

#include <boost/json.hpp>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "base/limits.h"
#include "lsp/analysis.h"

namespace pure::lsp {

namespace json = boost::json;

namespace {

// JSON-RPC's and LSP's error codes.
enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kServerNotInitialized = -32002,
  kRequestFailed = -32803,
};

// A reply that is an error: thrown by a handler, sent as the request's error.
struct RpcError {
  int code;
  std::string message;
};

[[noreturn]] void bad_params(const std::string& what) { throw RpcError{kInvalidParams, what}; }

const json::object& object_at(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  if (!v || !v->is_object()) bad_params(std::string("'") + key + "' must be an object");
  return v->get_object();
}

std::string string_at(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  if (!v || !v->is_string()) bad_params(std::string("'") + key + "' must be a string");
  return std::string(v->get_string());
}

uint32_t uint_at(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  if (v) {
    if (const int64_t* i = v->if_int64(); i && *i >= 0) return *i > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(*i);
    if (const uint64_t* u = v->if_uint64()) return *u > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(*u);
  }
  bad_params(std::string("'") + key + "' must be a non-negative integer");
}

Position position_at(const json::object& o, const char* key) {
  const json::object& p = object_at(o, key);
  return {uint_at(p, "line"), uint_at(p, "character")};
}

json::object to_json(Position p) { return {{"line", p.line}, {"character", p.character}}; }
json::object to_json(const Range& r) { return {{"start", to_json(r.start)}, {"end", to_json(r.end)}}; }

json::object to_json(const Symbol& s) {
  json::object o{{"name", s.name},
                 {"detail", s.detail},
                 {"kind", static_cast<int>(s.kind)},
                 {"range", to_json(s.range)},
                 {"selectionRange", to_json(s.selection)}};
  if (!s.children.empty()) {
    json::array kids;
    for (const Symbol& k : s.children) kids.push_back(to_json(k));
    o["children"] = std::move(kids);
  }
  return o;
}

// A file:// URI's path, for the messages; any other URI is kept whole.
std::string uri_path(const std::string& uri) {
  if (uri.rfind("file://", 0) != 0) return uri;
  std::string out;
  for (size_t i = 7; i < uri.size(); ++i) {
    auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
    if (uri[i] == '%' && i + 2 < uri.size() && hex(uri[i + 1]) >= 0 && hex(uri[i + 2]) >= 0) {
      out += static_cast<char>(hex(uri[i + 1]) * 16 + hex(uri[i + 2]));
      i += 2;
    } else {
      out += uri[i];
    }
  }
  return out;
}

// The file:// URI of an absolute path (bytes other than letters, digits, "/-._~" escaped as %XX);
// a path that is not absolute is kept as it is (it came from a URI that was not a file's).
std::string path_uri(const std::string& path) {
  if (path.empty() || path[0] != '/') return path;
  std::string out = "file://";
  static const char* const kHex = "0123456789ABCDEF";
  for (unsigned char c : path) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

class Server {
 public:
  Server(std::FILE* in, std::FILE* out, std::FILE* log) : in_(in), out_(out), log_(log) {}

  int run() {
    std::string body;
    while (true) {
      switch (read_message(body)) {
        case Read::End: return exit_code_ >= 0 ? exit_code_ : 1;
        case Read::Skip: continue;
        case Read::Message: break;
      }
      handle(body);
      if (exit_code_ >= 0) return exit_code_;
    }
  }

 private:
  std::FILE* in_;
  std::FILE* out_;
  std::FILE* log_;
  bool initialized_ = false, shut_down_ = false;
  int exit_code_ = -1;
  struct Open {
    std::string text;
    std::unique_ptr<Document> doc;
    std::set<std::string> imported;  // the URIs of imported files this document published errors on
  };
  std::map<std::string, Open> docs_;

  void note(const std::string& line) {
    std::fprintf(log_, "pure-lsp: %s\n", line.c_str());
    std::fflush(log_);
  }

  // ---- framing ---------------------------------------------------------------------------------
  enum class Read { Message, Skip, End };

  // One header line without its CR LF; false at the end of the input.
  bool read_line(std::string& line, bool& too_long) {
    line.clear();
    too_long = false;
    int c;
    while ((c = std::getc(in_)) != EOF) {
      if (c == '\n') {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return true;
      }
      if (line.size() < limits::kLspHeaderLine) line += static_cast<char>(c);
      else too_long = true;
    }
    return !line.empty();
  }

  Read read_message(std::string& body) {
    std::optional<size_t> length;
    bool bad = false, any = false;
    std::string line;
    bool too_long = false;
    while (true) {
      if (!read_line(line, too_long)) return Read::End;
      if (line.empty()) {
        if (!any) continue;  // blank lines between messages
        break;
      }
      any = true;
      size_t colon = line.find(':');
      if (too_long || colon == std::string::npos) {
        bad = true;
        continue;
      }
      std::string name = line.substr(0, colon), value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
      for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (name == "content-length") {
        size_t n = 0;
        bool ok = !value.empty() && value.size() <= 19;
        for (char ch : value) {
          if (ch < '0' || ch > '9') ok = false;
          else n = n * 10 + static_cast<size_t>(ch - '0');
        }
        if (ok) length = n;
        else bad = true;
      }
    }
    if (!length) {
      note(bad ? "a message's headers are malformed and give no Content-Length; skipped"
               : "a message without a Content-Length header; skipped");
      return Read::Skip;
    }
    if (*length > limits::kLspMessageBytes) {
      note("a message of " + std::to_string(*length) + " bytes is over the limit of " +
           std::to_string(limits::kLspMessageBytes) + "; skipped");
      char buf[65536];
      for (size_t left = *length; left > 0;) {
        size_t got = std::fread(buf, 1, std::min(left, sizeof buf), in_);
        if (got == 0) return Read::End;
        left -= got;
      }
      return Read::Skip;
    }
    body.resize(*length);
    size_t got = *length ? std::fread(body.data(), 1, *length, in_) : 0;
    if (got != *length) {
      note("the input ended inside a message");
      return Read::End;
    }
    return Read::Message;
  }

  void send(const json::object& message) {
    std::string text = json::serialize(message);
    std::fprintf(out_, "Content-Length: %zu\r\n\r\n", text.size());
    std::fwrite(text.data(), 1, text.size(), out_);
    std::fflush(out_);
  }

  void reply(const json::value& id, json::value result) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
  }

  void reply_error(const json::value& id, int code, const std::string& message) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
  }

  void notify(const char* method, json::object params) {
    send({{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }

  // ---- dispatch --------------------------------------------------------------------------------
  void handle(const std::string& body) {
    boost::system::error_code ec;
    json::value message = json::parse(body, ec);
    if (ec) {
      reply_error(nullptr, kParseError, "the message is not JSON: " + ec.message());
      return;
    }
    json::object* obj = message.if_object();
    const json::value* id = obj ? obj->if_contains("id") : nullptr;
    bool valid_id = id && (id->is_int64() || id->is_uint64() || id->is_string());
    if (id && !valid_id) {
      reply_error(nullptr, kInvalidRequest, "a request's id must be a number or a string");
      return;
    }
    const json::value* method_value = obj ? obj->if_contains("method") : nullptr;
    if (!obj || !method_value || !method_value->is_string()) {
      if (obj && !method_value && id && (obj->contains("result") || obj->contains("error"))) return;  // a reply to us: none expected
      reply_error(id ? *id : json::value(nullptr), kInvalidRequest, "a message must be an object with a string 'method'");
      return;
    }
    std::string method(method_value->get_string());
    json::object empty;
    const json::value* params_value = obj->if_contains("params");
    const json::object* params = &empty;
    if (params_value && params_value->is_object()) params = &params_value->get_object();
    else if (params_value && !params_value->is_null()) {
      if (id) reply_error(*id, kInvalidParams, "'params' must be an object");
      else note("the notification " + method + " has params that are not an object; ignored");
      return;
    }
    try {
      if (id) {
        json::value result = request(method, *params);
        reply(*id, std::move(result));
      } else {
        notification(method, *params);
      }
    } catch (const RpcError& e) {
      if (id) reply_error(*id, e.code, e.message);
      else note(method + ": " + e.message);
    } catch (const std::exception& e) {
      if (id) reply_error(*id, kInternalError, std::string("internal error: ") + e.what());
      else note(method + ": internal error: " + e.what());
    }
  }

  json::value request(const std::string& method, const json::object& params) {
    if (method == "initialize") {
      if (initialized_) throw RpcError{kInvalidRequest, "initialize was already sent"};
      initialized_ = true;
      return initialize_result();
    }
    if (!initialized_) throw RpcError{kServerNotInitialized, "the first request must be initialize"};
    if (shut_down_) throw RpcError{kInvalidRequest, "the server is shut down: only exit may follow"};
    if (method == "shutdown") {
      shut_down_ = true;
      return nullptr;
    }
    if (method == "textDocument/hover") return hover(params);
    if (method == "textDocument/definition") return definition(params);
    if (method == "textDocument/references") return references(params);
    if (method == "textDocument/documentSymbol") return symbols(params);
    if (method == "textDocument/completion") return completion(params);
    if (method == "textDocument/rename") return rename(params);
    if (method == "textDocument/prepareRename") return prepare_rename(params);
    if (method == "textDocument/formatting") return formatting(params);
    throw RpcError{kMethodNotFound, "pure-lsp does not implement " + method};
  }

  void notification(const std::string& method, const json::object& params) {
    if (method == "exit") {
      exit_code_ = shut_down_ ? 0 : 1;
      return;
    }
    if (!initialized_ || shut_down_) return;  // notifications before initialize or after shutdown are dropped
    if (method == "textDocument/didOpen") {
      const json::object& doc = object_at(params, "textDocument");
      update(string_at(doc, "uri"), string_at(doc, "text"));
    } else if (method == "textDocument/didChange") {
      std::string uri = string_at(object_at(params, "textDocument"), "uri");
      auto it = docs_.find(uri);
      if (it == docs_.end()) bad_params("didChange of a document that is not open: " + uri);
      const json::value* changes = params.if_contains("contentChanges");
      if (!changes || !changes->is_array()) bad_params("'contentChanges' must be an array");
      std::string text = it->second.text;
      for (const json::value& c : changes->get_array()) {
        if (!c.is_object()) bad_params("a content change must be an object");
        const json::object& change = c.get_object();
        std::string new_text = string_at(change, "text");
        if (const json::value* r = change.if_contains("range"); r && r->is_object()) {
          // an incremental change, though the server asked for whole documents: applied all the same
          Document at(uri_path(uri), text);
          uint32_t from = at.offset_of(position_at(r->get_object(), "start"));
          uint32_t to = at.offset_of(position_at(r->get_object(), "end"));
          if (to < from) std::swap(from, to);
          text = text.substr(0, from) + new_text + text.substr(to);
        } else {
          text = std::move(new_text);
        }
      }
      update(uri, std::move(text));
    } else if (method == "textDocument/didClose") {
      std::string uri = string_at(object_at(params, "textDocument"), "uri");
      auto it = docs_.find(uri);
      if (it != docs_.end()) {
        std::set<std::string> imported = std::move(it->second.imported);
        docs_.erase(it);
        notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
        clear_imported(imported, {});
      }
    }
    // initialized, didSave, $/cancelRequest, workspace/didChangeConfiguration, ...: nothing to do
  }

  json::object initialize_result() {
    return {{"capabilities",
             {{"textDocumentSync", {{"openClose", true}, {"change", 1}}},
              {"hoverProvider", true},
              {"definitionProvider", true},
              {"referencesProvider", true},
              {"documentSymbolProvider", true},
              {"renameProvider", {{"prepareProvider", true}}},
              {"documentFormattingProvider", true},
              {"completionProvider", {{"triggerCharacters", json::array{"."}}}}}},
            {"serverInfo", {{"name", "pure-lsp"}, {"version", "0.1"}}}};
  }

  // ---- documents -------------------------------------------------------------------------------
  void update(const std::string& uri, std::string text) {
    Open& open = docs_[uri];
    open.text = std::move(text);
    open.doc.reset();
    open.doc = std::make_unique<Document>(uri_path(uri), open.text);
    json::array diags;
    for (const Diag& d : open.doc->diagnostics())
      diags.push_back({{"range", to_json(d.range)}, {"severity", 1}, {"source", "pure"}, {"message", d.message}});
    notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", std::move(diags)}});
    // The errors inside imported files, on those files (unless one is open: its own analysis
    // answers for it); a file whose errors are gone gets an empty list.
    std::map<std::string, json::array> by_file;
    for (const FileDiag& d : open.doc->imported_diagnostics()) {
      std::string file_uri = path_uri(d.path);
      if (file_uri == uri || docs_.count(file_uri)) continue;
      by_file[file_uri].push_back(
          {{"range", to_json(d.diag.range)}, {"severity", 1}, {"source", "pure"}, {"message", d.diag.message}});
    }
    std::set<std::string> before = std::move(open.imported), now;
    for (auto& [file_uri, list] : by_file) {
      now.insert(file_uri);
      notify("textDocument/publishDiagnostics", {{"uri", file_uri}, {"diagnostics", std::move(list)}});
    }
    open.imported = now;
    for (const std::string& u : now) before.erase(u);
    clear_imported(before, uri);
  }

  // Empty diagnostics for imported files no open document publishes errors on any more.
  void clear_imported(const std::set<std::string>& uris, const std::string& except) {
    for (const std::string& u : uris) {
      bool still = docs_.count(u) > 0;
      for (const auto& [doc_uri, open] : docs_)
        if (doc_uri != except && open.imported.count(u)) still = true;
      if (!still) notify("textDocument/publishDiagnostics", {{"uri", u}, {"diagnostics", json::array()}});
    }
  }

  const Document& document(const json::object& params, std::string* uri_out = nullptr) {
    std::string uri = string_at(object_at(params, "textDocument"), "uri");
    auto it = docs_.find(uri);
    if (it == docs_.end() || !it->second.doc) throw RpcError{kRequestFailed, "the document is not open: " + uri};
    if (uri_out) *uri_out = uri;
    return *it->second.doc;
  }

  json::value hover(const json::object& params) {
    const Document& doc = document(params);
    std::string text = doc.hover(position_at(params, "position"));
    if (text.empty()) return nullptr;
    return json::object{{"contents", {{"kind", "markdown"}, {"value", text}}}};
  }

  json::value definition(const json::object& params) {
    std::string uri;
    const Document& doc = document(params, &uri);
    Range r;
    std::string file;
    if (!doc.definition(position_at(params, "position"), r, &file)) return nullptr;
    return json::object{{"uri", file.empty() ? uri : path_uri(file)}, {"range", to_json(r)}};
  }

  json::value references(const json::object& params) {
    std::string uri;
    const Document& doc = document(params, &uri);
    bool with_declaration = true;
    if (const json::value* c = params.if_contains("context"); c && c->is_object())
      if (const json::value* d = c->get_object().if_contains("includeDeclaration"); d && d->is_bool()) with_declaration = d->get_bool();
    Position pos = position_at(params, "position");
    std::vector<Range> ranges = doc.references(pos);
    Range decl;
    bool has_decl = doc.definition(pos, decl);
    json::array out;
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (i == 0 && has_decl && !with_declaration) continue;
      out.push_back(json::object{{"uri", uri}, {"range", to_json(ranges[i])}});
    }
    return out;
  }

  json::value symbols(const json::object& params) {
    json::array out;
    for (const Symbol& s : document(params).symbols()) out.push_back(to_json(s));
    return out;
  }

  json::value completion(const json::object& params) {
    json::array items;
    for (const Completion& c : document(params).completion(position_at(params, "position")))
      items.push_back({{"label", c.label}, {"detail", c.detail}, {"kind", static_cast<int>(c.kind)}});
    return json::object{{"isIncomplete", false}, {"items", std::move(items)}};
  }

  // The whole document in `pure-run --fmt`'s layout: one edit replacing it, none when it already
  // is; a document with a syntax error is an error naming it (nothing is changed).
  json::value formatting(const json::object& params) {
    std::string uri;
    const Document& doc = document(params, &uri);
    const std::string& text = docs_.at(uri).text;
    std::string formatted, error;
    if (!format_text(uri_path(uri), text, &formatted, &error)) throw RpcError{kRequestFailed, error};
    json::array edits;
    if (formatted != text) {
      Range all{Position{0, 0}, doc.position_of(static_cast<uint32_t>(text.size()))};
      edits.push_back({{"range", to_json(all)}, {"newText", formatted}});
    }
    return edits;
  }

  // The name's range when it can be renamed, else an error saying why (before the client asks
  // for the new name).
  json::value prepare_rename(const json::object& params) {
    const Document& doc = document(params);
    Range r;
    std::string error;
    if (!doc.prepare_rename(position_at(params, "position"), &r, &error)) throw RpcError{kRequestFailed, error};
    return to_json(r);
  }

  json::value rename(const json::object& params) {
    std::string uri;
    const Document& doc = document(params, &uri);
    std::string new_name = string_at(params, "newName"), error;
    std::vector<Range> ranges = doc.rename(position_at(params, "position"), new_name, &error);
    if (!error.empty()) throw RpcError{kRequestFailed, error};
    json::array edits;
    for (const Range& r : ranges) edits.push_back({{"range", to_json(r)}, {"newText", new_name}});
    return json::object{{"changes", {{uri, std::move(edits)}}}};
  }
};

}  // namespace

int serve(std::FILE* in, std::FILE* out, std::FILE* log) {
  try {
    Server server(in, out, log);
    return server.run();
  } catch (const std::exception& e) {
    std::fprintf(log, "pure-lsp: stopped: %s\n", e.what());
    return 1;
  }
}

}  // namespace pure::lsp
