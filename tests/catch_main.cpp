// main() for workpart's unit tests (Catch2 v2), compiled once into the static
// library workpart_catch_main and linked by every workpart_add_test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
