// tests/serve/test_router.cpp — the router of serve/ (Api::handle in api.cpp): a method and a path
// to a route, and every refusal before a module runs anything: 404 for what is not there, 405
// (with Allow) for a method a route does not take, 415 for a body that is not JSON, 421 for a Host
// not served, 503 for a module still recovering. The module here never recovers (no owner, no
// data directory), so every answer comes back at once, on this thread; the status, the body and
// the headers are checked exactly.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "serve/api.h"
#include "serve/api_internal.h"
#include "tests/support/compile_module.h"

namespace pure::serve {
namespace {

constexpr const char* kShop = R"(list stock by sku: text { qty: int }
event add(sku: text, qty: int) { stock[sku] = { qty: qty } }
query qty(sku: text) -> int { return stock[sku].qty }
fn twice(n: int) -> int { return 2 * n }
)";

// One module "shop", recovering, behind an Api with the rules of a server on 127.0.0.1.
struct Router {
  Module shop;
  std::unique_ptr<Api> api;

  Router() {
    shop.name = "shop";
    shop.source = kShop;
    shop.program = test::compile_module(kShop);
    Source source("shop.pure", kShop);  // the stored lists' names, as pure-serve keeps them
    Diagnostics diags(source);
    CheckedModule checked = compile_frontend(source, diags);
    REQUIRE(!diags.any());
    shop.stored = ir::lower_module(checked, "shop.pure").stored;
    ApiOptions options;
    options.query_threads = 1;
    REQUIRE(make_host_rules("127.0.0.1", {}, options.hosts) == "");
    api = std::make_unique<Api>(std::vector<Module*>{&shop}, std::move(options));
  }

  Response ask(std::string_view method, std::string_view target, std::string_view content_type = "",
               std::string_view host = "127.0.0.1:8080") {
    Request request;
    request.method = method;
    request.target = target;
    request.host = host;
    request.content_type = content_type;
    request.body = "{}";
    int answers = 0;
    Response out;
    api->handle(request, [&](Response r) {
      ++answers;
      out = std::move(r);
    });
    REQUIRE(answers == 1);  // answered at once: nothing reached an owner or a query thread
    return out;
  }
};

std::string error_of(std::string_view message) { return error_body(message); }

TEST_CASE("unknown paths and modules: 404 naming what there is") {
  Router router;
  Response r = router.ask("GET", "/nothing");
  CHECK(r.status == 404);
  CHECK(r.body == error_of("no route /nothing: the API is under /v1/MODULE, /health and /metrics, the console at /"));
  r = router.ask("GET", "/v1/bank");
  CHECK(r.status == 404);
  CHECK(r.body == error_of("no module 'bank' (serving: shop)"));
  r = router.ask("GET", "/v1/shop/lists/stock/more");
  CHECK(r.status == 404);
  CHECK(r.body == error_of("no route /v1/shop/lists/stock/more: use /v1/shop/NAME or /v1/shop/lists/LIST"));
  // a function that is neither an event nor a query is no route, nor is a name that is nothing
  r = router.ask("POST", "/v1/shop/twice", "application/json");
  CHECK(r.status == 404);
  CHECK(r.body == error_of("module shop has no event or query 'twice'"));
  r = router.ask("POST", "/v1/shop/nosuch", "application/json");
  CHECK(r.status == 404);
  CHECK(r.body == error_of("module shop has no event or query 'nosuch'"));
  r = router.ask("POST", "/v1/shop/", "application/json");
  CHECK(r.status == 404);
  CHECK(r.body == error_of("module shop has no event or query ''"));
}

TEST_CASE("a method a route does not take: 405 with Allow") {
  Router router;
  Response r = router.ask("POST", "/health");
  CHECK(r.status == 405);
  CHECK(r.allow == "GET, HEAD");
  CHECK(r.body == error_of("/health takes GET, not POST"));
  r = router.ask("DELETE", "/metrics");
  CHECK(r.status == 405);
  CHECK(r.allow == "GET, HEAD");
  CHECK(r.body == error_of("/metrics takes GET, not DELETE"));
  r = router.ask("PUT", "/v1/shop");
  CHECK(r.status == 405);
  CHECK(r.allow == "GET, HEAD");
  CHECK(r.body == error_of("/v1/shop takes GET, not PUT"));
  r = router.ask("POST", "/v1/shop/lists/stock");
  CHECK(r.status == 405);
  CHECK(r.body == error_of("a list page takes GET, not POST"));
  r = router.ask("GET", "/v1/shop/add");
  CHECK(r.status == 405);
  CHECK(r.allow == "POST");
  CHECK(r.body == error_of("event add takes POST, not GET"));
  r = router.ask("HEAD", "/v1/shop/qty?sku=a");
  CHECK(r.status == 405);
  CHECK(r.allow == "POST");
  CHECK(r.body == error_of("query qty takes POST, not HEAD"));
  // the module has no function 'source', so its source route answers every other method with 405
  r = router.ask("POST", "/v1/shop/source", "application/json");
  CHECK(r.status == 405);
  CHECK(r.body == error_of("/v1/shop/source takes GET, not POST"));
  r = router.ask("POST", "/", "application/json");  // the console's
  CHECK(r.status == 405);
}

TEST_CASE("routes that answer while the module recovers, and those that wait for it") {
  Router router;
  Response r = router.ask("GET", "/health");
  CHECK(r.status == 503);
  CHECK(r.body == "{\"ok\":false,\"modules\":{\"shop\":\"recovering\"}}");
  r = router.ask("GET", "/v1/shop/source");
  CHECK(r.status == 200);
  CHECK(r.content_type == "application/json");
  std::string source = "{\"module\":\"shop\",\"source\":";
  append_json_string(source, kShop);
  CHECK(r.body == source + "}");
  r = router.ask("HEAD", "/v1/shop");  // the interface: its lists' counts null while recovering
  CHECK(r.status == 200);
  CHECK(r.body.starts_with("{\"module\":\"shop\",\"state\":\"recovering\",\"events_need_token\":false,"));
  CHECK(r.body.ends_with(",\"lists\":[{\"name\":\"stock\",\"kind\":\"keyed\",\"count\":null,"
                         "\"key\":[{\"name\":\"sku\",\"type\":\"text\"}],\"fields\":[{\"name\":\"qty\",\"type\":\"int\"}]}]}"));
  const std::string recovering = error_of("module shop is recovering (0 records replayed so far); try again shortly");
  r = router.ask("GET", "/v1/shop/lists/stock");
  CHECK(r.status == 503);
  CHECK(r.body == recovering);
  r = router.ask("POST", "/v1/shop/add", "application/json; charset=utf-8");
  CHECK(r.status == 503);
  CHECK(r.body == recovering);
  r = router.ask("POST", "/v1/shop/qty", "Application/JSON");
  CHECK(r.status == 503);
  CHECK(r.body == recovering);
  router.shop.failure = "the manifest is damaged";
  router.shop.state.store(Module::State::Failed);
  r = router.ask("POST", "/v1/shop/add", "application/json");
  CHECK(r.status == 503);
  CHECK(r.body == error_of("module shop did not recover: the manifest is damaged"));
}

TEST_CASE("a body that is not JSON, a Host not served, a foreign Origin: refused before the route") {
  Router router;
  Response r = router.ask("POST", "/v1/shop/add", "text/plain");
  CHECK(r.status == 415);
  CHECK(r.body == error_of("event add takes a JSON body: send 'Content-Type: application/json' (got 'text/plain')"));
  r = router.ask("POST", "/v1/shop/qty");
  CHECK(r.status == 415);
  CHECK(r.body == error_of("query qty takes a JSON body: send 'Content-Type: application/json' (got none)"));
  r = router.ask("GET", "/v1/shop", "", "evil.example:8080");
  CHECK(r.status == 421);
  CHECK(r.body == error_of("this server does not serve the host 'evil.example:8080' (it serves 127.0.0.1, localhost, "
                           "[::1]; start it with --allow-host NAME to serve another name)"));
  Request request;
  request.method = "GET";
  request.target = "/v1/shop";
  request.host = "127.0.0.1:8080";
  request.origin = "http://evil.example";
  Response out;
  router.api->handle(request, [&](Response x) { out = std::move(x); });
  CHECK(out.status == 403);
  CHECK(out.body ==
        error_of("cross-origin requests are refused: Origin 'http://evil.example' is not this server's (http://127.0.0.1:8080)"));
}

}  // namespace
}  // namespace pure::serve
