// tests/support/examples.h — the examples (examples/*.pure) as the engine tests run them: each
// program with what pure-run would give it from its side files (NAME.in as stdin, NAME.args one
// argument a line, NAME.flags for --max-steps). tests/examples/run_examples.py reads the same
// files for pure-run itself. Header only, standard library only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace pure::test {

// The whole file (empty when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The file's lines without their line ends; none when it does not exist.
inline std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  if (!std::filesystem::exists(path)) return lines;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Example {
  std::filesystem::path path;        // DIR/NAME.pure
  std::string text;                  // its source
  std::string input;                 // NAME.in, else empty
  std::vector<std::string> args;     // NAME.args
  uint64_t max_steps = 100'000'000;  // NAME.flags: --max-steps N
};

// Every .pure file in dir, in name order; none when dir is not a directory.
inline std::vector<Example> read_examples(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> programs;
  if (std::filesystem::is_directory(dir))
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".pure") programs.push_back(entry.path());
  std::sort(programs.begin(), programs.end());
  std::vector<Example> examples;
  for (const std::filesystem::path& path : programs) {
    Example e;
    e.path = path;
    e.text = read_file(path);
    std::filesystem::path stem = path.parent_path() / path.stem();
    std::filesystem::path in = stem.string() + ".in";
    if (std::filesystem::exists(in)) e.input = read_file(in);
    e.args = read_lines(stem.string() + ".args");
    std::vector<std::string> flags = read_lines(stem.string() + ".flags");
    for (size_t i = 0; i + 1 < flags.size(); ++i)
      if (flags[i] == "--max-steps") e.max_steps = std::stoull(flags[i + 1]);
    examples.push_back(std::move(e));
  }
  return examples;
}

}  // namespace pure::test
