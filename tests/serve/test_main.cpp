// tests/serve/test_main.cpp — doctest's main for the unit tests of serve/ (test_router.cpp,
// test_args.cpp, test_json.cpp).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
