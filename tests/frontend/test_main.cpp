// tests/frontend/test_main.cpp — doctest's main for the frontend tests (lexer, parser, checker).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
