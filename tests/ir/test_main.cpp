// tests/ir/test_main.cpp — doctest's main for the IR tests.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
