// tests/serve/test_access.cpp — serve/access.cpp without a server: the names each listen
// address serves (every interface and other addresses too, which the process tests on 127.0.0.1
// cannot reach), token files and scopes, the Authorization check, same-origin and JSON types.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "serve/access.h"

using namespace pure::serve;

TEST_CASE("the Host names of each kind of listen address") {
  HostRules r;
  REQUIRE(make_host_rules("127.0.0.1", {}, r).empty());
  for (const char* ok : {"127.0.0.1", "127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]", "[::1]:80"}) CHECK(r.allows(ok));
  for (const char* no : {"evil.example", "10.0.0.1", "127.0.0.2", "[::2]", "", ":80", "localhost:", "localhost:x",
                         "[::1", "[::1]x", "localhost.", "a b"})
    CHECK_MESSAGE(!r.allows(no), no);
  REQUIRE(make_host_rules("127.0.0.2", {}, r).empty());
  CHECK(r.allows("127.0.0.2:9"));
  CHECK(r.allows("localhost"));
  REQUIRE(make_host_rules("::1", {}, r).empty());
  CHECK(r.allows("[::1]:8080"));
  CHECK(r.allows("127.0.0.1"));

  // every interface: any IP literal and localhost, never a name
  REQUIRE(make_host_rules("0.0.0.0", {}, r).empty());
  for (const char* ok : {"10.1.2.3", "10.1.2.3:8080", "192.168.0.1", "[fd00::5]:80", "[::ffff:10.0.0.1]", "localhost"})
    CHECK_MESSAGE(r.allows(ok), ok);
  for (const char* no : {"evil.example", "10.1.2", "10.1.2.3.4", "256.1.1.1", "1.2.3.4.evil", "[fd00::g]"})
    CHECK_MESSAGE(!r.allows(no), no);
  REQUIRE(make_host_rules("::", {}, r).empty());
  CHECK(r.allows("10.1.2.3"));

  // another address: that one only
  REQUIRE(make_host_rules("10.0.0.5", {}, r).empty());
  CHECK(r.allows("10.0.0.5:8080"));
  CHECK(!r.allows("10.0.0.6"));
  CHECK(!r.allows("localhost"));
  REQUIRE(make_host_rules("fd00::5", {}, r).empty());
  CHECK(r.allows("[FD00::5]:8080"));

  // --allow-host
  REQUIRE(make_host_rules("10.0.0.5", {"App.Example", "[fd00::7]"}, r).empty());
  CHECK(r.allows("app.example:443"));
  CHECK(r.allows("[fd00::7]"));
  CHECK(r.list() == "10.0.0.5, app.example, [fd00::7]");
  REQUIRE(make_host_rules("10.0.0.5", {"*"}, r).empty());
  CHECK(r.allows("anything.example"));
  for (const char* bad : {"a:80", "", "a b", "http://a", "a/b"})
    CHECK(make_host_rules("127.0.0.1", {bad}, r).find("--allow-host takes a host name without a port") == 0);
  // the cache of the last Host allowed never lets through what the rules refuse
  HostRules other;
  REQUIRE(make_host_rules("10.0.0.9", {}, other).empty());
  REQUIRE(make_host_rules("127.0.0.1", {}, r).empty());
  CHECK(r.allows("localhost:1"));
  CHECK(!other.allows("localhost:1"));
  CHECK(r.allows("localhost:1"));
}

TEST_CASE("loopback addresses") {
  CHECK(is_loopback_address("127.0.0.1"));
  CHECK(is_loopback_address("127.9.9.9"));
  CHECK(is_loopback_address("::1"));
  CHECK(!is_loopback_address("0.0.0.0"));
  CHECK(!is_loopback_address("::"));
  CHECK(!is_loopback_address("10.0.0.1"));
}

TEST_CASE("token files, scopes and the Authorization check") {
  Tokens t;
  REQUIRE(parse_token_file("# c\n\nread r\r\nwrite w\nadmin a\nread,write rw\nlone\n", 1000, t.tokens).empty());
  REQUIRE(t.tokens.size() == 5);
  CHECK(t.tokens[0].scopes == kScopeRead);
  CHECK(t.tokens[1].scopes == (kScopeRead | kScopeWrite));
  CHECK(t.tokens[2].scopes == (kScopeRead | kScopeWrite | kScopeAdmin));
  CHECK(t.tokens[3].scopes == (kScopeRead | kScopeWrite));
  CHECK(t.tokens[4].scopes == (kScopeRead | kScopeWrite));  // a lone token: write
  CHECK(t.reads_need_token());
  CHECK(t.writes_need_token());
  CHECK(t.check("").outcome == Tokens::Outcome::Missing);
  CHECK(t.check("Basic abc").outcome == Tokens::Outcome::WrongScheme);
  CHECK(t.check("Bearerr").outcome == Tokens::Outcome::WrongScheme);
  CHECK(t.check("Bearer x").outcome == Tokens::Outcome::Invalid);
  CHECK(t.check("Bearer ").outcome == Tokens::Outcome::Invalid);
  CHECK(t.check("Bearer r ").scopes == kScopeRead);
  CHECK(t.check("bEARER a").scopes == (kScopeRead | kScopeWrite | kScopeAdmin));
  CHECK(t.check("Bearer rw").outcome == Tokens::Outcome::Valid);
  CHECK(t.check("Bearer rww").outcome == Tokens::Outcome::Invalid);
  CHECK(t.check("Bearer R").outcome == Tokens::Outcome::Invalid);
  CHECK(std::string(scope_name(kScopeRead | kScopeWrite)) == "write");

  Tokens writers;
  REQUIRE(parse_token_file("only-token", 100, writers.tokens).empty());
  CHECK(!writers.reads_need_token());
  CHECK(writers.writes_need_token());

  std::vector<Token> out;
  CHECK(parse_token_file("", 100, out) == "holds no token (a line 'SCOPE[,SCOPE] TOKEN' or a lone TOKEN; '#' starts a comment)");
  CHECK(parse_token_file("read a b", 100, out).find("line 1: expected") == 0);
  CHECK(parse_token_file("x\nread,admin,x t", 100, out).find("line 2: unknown scope 'x'") == 0);
  CHECK(parse_token_file("read a\x7f", 100, out).find("line 1: the token holds the byte 0x7f") == 0);
  CHECK(parse_token_file("a\nb\na\n", 100, out) == "line 3: the same token as line 1");
  // 'Authorization: Bearer ' plus CRLF is 24 bytes: with a limit of 40 a token of 16 cannot fit, 15 can
  CHECK(parse_token_file(std::string(15, 't'), 40, out).empty());
  CHECK(parse_token_file(std::string(16, 't'), 40, out).find("line 1: the token is 16 bytes") == 0);
}

TEST_CASE("same origin and JSON types") {
  CHECK(same_origin("http://127.0.0.1:8080", "127.0.0.1:8080", false));
  CHECK(same_origin("HTTP://LOCALHOST:8080", "localhost:8080", false));
  CHECK(!same_origin("https://127.0.0.1:8080", "127.0.0.1:8080", false));
  CHECK(same_origin("https://127.0.0.1:8080", "127.0.0.1:8080", true));
  CHECK(!same_origin("null", "127.0.0.1", false));
  CHECK(!same_origin("http://127.0.0.1", "", false));
  CHECK(!same_origin("http://127.0.0.1:8080/", "127.0.0.1:8080", false));
  for (const char* ok : {"application/json", "application/json; charset=utf-8", "Application/JSON", " application/json ;x=y",
                         "application/json;charset=UTF-8"})
    CHECK_MESSAGE(is_json_content_type(ok), ok);
  for (const char* no : {"", "text/plain", "application/jsonx", "application/json-seq", "application/x-www-form-urlencoded",
                         "multipart/form-data", "json", "application/ json"})
    CHECK_MESSAGE(!is_json_content_type(no), no);
}
