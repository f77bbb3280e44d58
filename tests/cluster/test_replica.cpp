// tests/cluster/test_replica.cpp — cluster/ without a NATS server: --cluster's parsing, and the
// bursts' records (host.h ShippedRecord, the log's record layout) read back as written and refused
// when damaged. The replication itself is test_cluster.py's, on a real NATS cluster.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "cluster/cluster.h"
#include "host/host.h"

using pure::cluster::parse_servers;

TEST_CASE("--cluster takes nats://HOST:PORT, comma-separated") {
  std::vector<std::string> s;
  CHECK(parse_servers("nats://127.0.0.1:4222", &s) == "");
  CHECK(s == std::vector<std::string>{"nats://127.0.0.1:4222"});
  CHECK(parse_servers("nats://a:1,nats://b:2,nats://c:3", &s) == "");
  CHECK(s.size() == 3);
  CHECK(s[2] == "nats://c:3");
  CHECK(parse_servers("", &s).find("expected nats://HOST:PORT") != std::string::npos);
  CHECK(parse_servers("127.0.0.1:4222", &s).find("expected nats://HOST:PORT") != std::string::npos);
  CHECK(parse_servers("nats://a:1,", &s).find("got ''") != std::string::npos);
  CHECK(parse_servers("nats://host", &s).find("names no port") != std::string::npos);
  CHECK(parse_servers("nats://host:42x", &s).find("names no port") != std::string::npos);
}

TEST_CASE("a burst's records read back as written, and a damaged one is refused") {
  std::string burst;
  pure::host::append_shipped_record(burst, {7, 2, 1234, "", "", "args-7"});
  pure::host::append_shipped_record(burst, {8, 3, 1234, "key-8", "result-8", std::string_view("a\0b", 3)});
  size_t offset = 0;
  pure::host::ShippedRecord r;
  REQUIRE(pure::host::read_shipped_record(burst, &offset, &r) == "");
  CHECK(r.sequence == 7);
  CHECK(r.event == 2);
  CHECK(r.time_ms == 1234);
  CHECK(r.key.empty());
  CHECK(r.args == "args-7");
  REQUIRE(pure::host::read_shipped_record(burst, &offset, &r) == "");
  CHECK(r.sequence == 8);
  CHECK(r.key == "key-8");
  CHECK(r.result == "result-8");
  CHECK(r.args == std::string_view("a\0b", 3));
  CHECK(offset == burst.size());

  std::string damaged = burst;
  damaged[damaged.size() - 1] ^= 1;  // the last argument byte of record 8
  offset = 0;
  REQUIRE(pure::host::read_shipped_record(damaged, &offset, &r) == "");
  std::string e = pure::host::read_shipped_record(damaged, &offset, &r);
  CHECK(e.find("checksum") != std::string::npos);
  CHECK(e.find("offset ") == 0);
  std::string cut = burst.substr(0, burst.size() - 2);
  offset = 0;
  REQUIRE(pure::host::read_shipped_record(cut, &offset, &r) == "");
  CHECK(pure::host::read_shipped_record(cut, &offset, &r).find("past the end") != std::string::npos);
}
