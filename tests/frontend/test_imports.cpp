// tests/frontend/test_imports.cpp — `use "lib.pure"` in the frontend (resolve_imports, with the files
// in memory): the resolved text, which lines are whose, and each error's exact message and place.
// Depends on frontend/frontend.h through frontend_support.h.
#include <doctest/doctest.h>

#include <map>

#include "tests/frontend/frontend_support.h"

using namespace pure;

namespace {

// Files in memory; a name not there cannot be read.
struct Files {
  std::map<std::string, std::string> files;
  ReadFile reader() const {
    return [this](const std::string& path, std::string* text, std::string* why) {
      auto it = files.find(path);
      if (it == files.end()) {
        *why = "not there";
        return false;
      }
      *text = it->second;
      return true;
    };
  }
};

struct Resolved {
  bool ok = false;
  ResolvedModule module;
  std::string errors;
};

Resolved resolve(const Files& files, const std::string& path) {
  Resolved r;
  r.ok = resolve_imports(path, files.files.at(path), files.reader(), &r.module, &r.errors);
  return r;
}

// Compiles a resolved text with its files marked, as the tools do; the rendered errors.
std::string compile_errors(const std::string& path, const ResolvedModule& m) {
  Source source(path, m.text);
  for (const auto& [line, file] : m.files) source.add_file(line, file);
  Diagnostics diags(source);
  compile_frontend(source, diags);
  return diags.render();
}

}  // namespace

TEST_CASE("imports: the imported files follow the module's text, each once, the deepest first") {
  Files f;
  f.files["app/main.pure"] = "use \"lib/a.pure\"\nuse \"lib/b.pure\"\nfn main() { print(\"{fa() + fb()}\") }";
  f.files["app/lib/a.pure"] = "use \"b.pure\"\nfn fa() -> int { return fb() + 1 }\n";
  f.files["app/lib/b.pure"] = "fn fb() -> int { return 2 }\n";
  Resolved r = resolve(f, "app/main.pure");
  REQUIRE(r.ok);
  CHECK(r.errors == "");
  CHECK(r.module.text ==
        "use \"lib/a.pure\"\nuse \"lib/b.pure\"\nfn main() { print(\"{fa() + fb()}\") }\n"
        "\n// ---- imported: \"app/lib/b.pure\" ----\nfn fb() -> int { return 2 }\n"
        "\n// ---- imported: \"app/lib/a.pure\" ----\nuse \"b.pure\"\nfn fa() -> int { return fb() + 1 }\n");
  CHECK(r.module.files == std::vector<std::pair<uint32_t, std::string>>{{6, "app/lib/b.pure"}, {9, "app/lib/a.pure"}});
  CHECK(compile_errors("app/main.pure", r.module) == "");
}

TEST_CASE("imports: a module without use comes back unchanged") {
  Files f;
  f.files["m.pure"] = "fn main() { print(\"use\") }\n";
  Resolved r = resolve(f, "m.pure");
  CHECK(r.ok);
  CHECK(r.module.text == f.files["m.pure"]);
  CHECK(r.module.files.empty());
}

TEST_CASE("imports: errors, each in its own file") {
  Files f;
  f.files["m.pure"] = "fn main() {}\nuse \"gone.pure\"\n";
  Resolved r = resolve(f, "m.pure");
  CHECK(!r.ok);
  CHECK(r.errors ==
        "m.pure:2:1: error: cannot read the imported file 'gone.pure': not there\n"
        "  use \"gone.pure\"\n  ^\n"
        "  hint: the path is relative to the folder of the file with the 'use'\n");

  f.files["m.pure"] = "use \"a.pure\"\n";
  f.files["a.pure"] = "use \"b.pure\"\n";
  f.files["b.pure"] = "\nuse \"a.pure\"\n";
  r = resolve(f, "m.pure");
  CHECK(!r.ok);
  CHECK(r.errors.rfind("b.pure:2:1: error: import cycle: a.pure uses b.pure uses a.pure\n", 0) == 0);

  f.files["b.pure"] = "list stock by sku: text { qty: int }\nevent e() {}\nquery q() -> int { return 1 }\nfn main() {}\n";
  r = resolve(f, "m.pure");
  CHECK(!r.ok);
  const char* hint = "  hint: an imported file may declare types, constants and functions; state and its events belong to the module that uses it\n";
  CHECK(r.errors == std::string("b.pure:1:1: error: stored list 'stock' in an imported file\n  list stock by sku: text { qty: int }\n  ^\n") + hint +
                        "b.pure:2:1: error: event 'e' in an imported file\n  event e() {}\n  ^\n" + hint +
                        "b.pure:3:1: error: query 'q' in an imported file\n  query q() -> int { return 1 }\n  ^\n" + hint +
                        "b.pure:4:1: error: 'main' in an imported file\n  fn main() {}\n  ^\n"
                        "  hint: the module that uses it has the main\n");

  f.files["b.pure"] = "fn f( -> int {}\n";
  r = resolve(f, "m.pure");
  CHECK(!r.ok);
  CHECK(r.errors.rfind("b.pure:1:7: error: ", 0) == 0);
}

TEST_CASE("imports: a name declared in the module and in an imported file names both places") {
  Files f;
  f.files["m.pure"] = "use \"lib.pure\"\n\nfn twice(n: int) -> int { return n * 2 }\nfn main() {}\n";
  f.files["lib.pure"] = "// helpers\nfn twice(n: int) -> int { return n + n }\n";
  Resolved r = resolve(f, "m.pure");
  REQUIRE(r.ok);
  CHECK(compile_errors("m.pure", r.module) ==
        "lib.pure:2:1: error: 'twice' is declared twice (also at m.pure:3)\n"
        "  fn twice(n: int) -> int { return n + n }\n  ^\n");
  // a type error inside the imported file: its file, its line, its text
  f.files["lib.pure"] = "// helpers\nfn half(n: int) -> int { return \"n\" }\n";
  r = resolve(f, "m.pure");
  REQUIRE(r.ok);
  std::string errors = compile_errors("m.pure", r.module);
  CHECK(errors.rfind("lib.pure:2:", 0) == 0);
  CHECK(errors.find("\n  fn half(n: int) -> int { return \"n\" }\n") != std::string::npos);
}

TEST_CASE("imports: the depth and count limits") {
  Files f;
  f.files["m.pure"] = "use \"d0.pure\"\n";
  // the module and d0 .. d14 are 16 files: d14 cannot use a 17th
  for (size_t i = 0; i <= limits::kImportDepth; ++i)
    f.files["d" + std::to_string(i) + ".pure"] = "use \"d" + std::to_string(i + 1) + ".pure\"\n";
  Resolved r = resolve(f, "m.pure");
  CHECK(!r.ok);
  CHECK(r.errors.rfind("d" + std::to_string(limits::kImportDepth - 2) + ".pure:1:1: error: imports nest more than " +
                           std::to_string(limits::kImportDepth) + " files deep\n", 0) == 0);

  std::string many;
  for (size_t i = 0; i <= limits::kImportFiles; ++i) {
    many += "use \"f" + std::to_string(i) + ".pure\"\n";
    f.files["f" + std::to_string(i) + ".pure"] = "";
  }
  f.files["m.pure"] = many;
  r = resolve(f, "m.pure");
  CHECK(!r.ok);
  CHECK(r.errors.rfind("m.pure:" + std::to_string(limits::kImportFiles + 1) + ":1: error: a module imports more than " +
                           std::to_string(limits::kImportFiles) + " files\n", 0) == 0);
}
