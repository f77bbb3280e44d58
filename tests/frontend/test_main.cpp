// tests/frontend/test_main.cpp — doctest's main for the frontend and IR tests.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
