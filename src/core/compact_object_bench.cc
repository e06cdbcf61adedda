// Micro-benchmark: what storing and reading a string value costs in CompactObj, per value
// shape, with LZF compression on and off. Prints, per shape and setting, the bytes of the
// heap block, the time to store the value (SetString over a value of the same shape,
// as a SET overwrite does) and to read it (AppendTo into a reply buffer, as a GET does).
// Then the cost of growing a value by appends, with either setter.
//
//   build-opt/src/core/compact_object_bench [--values=N]
//
// Single-threaded and deterministic; times are the thread's CPU time over N values of
// each shape (different values, so that the branch predictor does not learn one). Run it
// pinned (taskset) and compare the rows of one run with each other.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "src/core/compact_object.h"

namespace {

using damselfly::core::CompactObj;

int64_t CpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string Padded(std::mt19937_64& rng, size_t size) {  // DEBUG POPULATE's values
  std::string value = "value:" + std::to_string(rng() % 10000000);
  value.resize(size, '\0');
  return value;
}

std::string Repeated(std::mt19937_64& rng, size_t size) {  // one character
  return std::string(size, static_cast<char>('a' + rng() % 26));
}

std::string Json(std::mt19937_64& rng, size_t size) {  // as tools/value-gen.py json
  std::string value;
  while (value.size() < size) {
    const uint64_t n = rng() % 1000000;
    value += "{\"id\":" + std::to_string(n) + ",\"name\":\"user" + std::to_string(n % 9973) +
             "\",\"email\":\"user" + std::to_string(n) + "@example.com\",\"active\":" +
             (n & 1 ? "true" : "false") + ",\"score\":" + std::to_string(n % 1000) + "},";
  }
  value.resize(size);
  return value;
}

std::string Words(std::mt19937_64& rng, size_t size) {  // prose from a small vocabulary
  static const char* const kWords[] = {
      "the",  "quick", "brown", "fox",   "jumps", "over",  "lazy", "dog",  "and",   "of",
      "to",   "in",    "is",    "that",  "for",   "it",    "as",   "was",  "with",  "be",
      "by",   "on",    "not",   "he",    "this",  "are",   "or",   "his",  "from",  "at",
      "which", "but",  "have",  "an",    "had",   "they",  "you",  "were", "their", "one",
      "all",  "we",    "can",   "her",   "has",   "there", "been", "if",   "more",  "when",
      "will", "would", "who",   "so",    "no"};
  std::string value;
  while (value.size() < size) {
    value += kWords[rng() % std::size(kWords)];
    value += ' ';
  }
  value.resize(size);
  return value;
}

std::string Text(std::mt19937_64& rng, size_t size) {  // random printable ASCII
  std::string value(size, ' ');
  for (char& c : value) c = static_cast<char>(32 + rng() % 95);
  return value;
}

std::string Binary(std::mt19937_64& rng, size_t size) {
  std::string value(size, ' ');
  for (char& c : value) c = static_cast<char>(rng());
  return value;
}

struct Shape {
  const char* name;
  std::string (*make)(std::mt19937_64&, size_t);
  size_t size;
};

}  // namespace

int main(int argc, char** argv) {
  size_t count = 20000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--values=", 9) == 0) count = std::strtoull(argv[i] + 9, nullptr, 10);
  }
  const Shape shapes[] = {
      {"padded", Padded, 1024}, {"repeated", Repeated, 1024}, {"json", Json, 512},
      {"json", Json, 1024},     {"json", Json, 4096},         {"words", Words, 1024},
      {"text", Text, 1024},
      {"binary", Binary, 1024}, {"binary", Binary, 4096},
  };
  std::printf("| shape | bytes | compression | block bytes | store ns | read ns |\n");
  std::printf("|---|---:|---|---:|---:|---:|\n");
  for (const Shape& shape : shapes) {
    std::mt19937_64 rng(42);
    std::vector<std::string> values;
    for (size_t i = 0; i < count; ++i) values.push_back(shape.make(rng, shape.size));
    for (bool compress : {false, true}) {
      // Objects are destroyed before the switch, as SetCompression requires.
      CompactObj::SetCompression(compress);
      std::vector<CompactObj> objs(64);
      for (size_t i = 0; i < objs.size(); ++i) objs[i].SetString(values[i]);
      const int64_t t0 = CpuNs();
      for (size_t i = 0; i < count; ++i) objs[i % objs.size()].SetString(values[i]);
      const int64_t t1 = CpuNs();
      std::string reply;
      size_t block_bytes = 0;
      for (size_t i = 0; i < count; ++i) {
        reply.clear();
        objs[i % objs.size()].AppendTo(&reply);
      }
      const int64_t t2 = CpuNs();
      for (const CompactObj& obj : objs) block_bytes += obj.MallocUsed();
      std::printf("| %s | %zu | %s | %.0f | %.0f | %.0f |\n", shape.name, shape.size,
                  compress ? "on" : "off", double(block_bytes) / objs.size(),
                  double(t1 - t0) / count, double(t2 - t1) / count);
    }
  }

  // APPEND decodes the value, appends and stores the result. Stored with SetString, a
  // compressed value is compressed whole again on every append; APPEND therefore stores
  // with SetUncompressedString.
  std::printf("\nAppends of 128-byte pieces from empty to 64 KiB, mean per append:\n\n");
  std::printf("| pieces | stored with | compression | ns per append | block bytes at the end |\n");
  std::printf("|---|---|---|---:|---:|\n");
  for (const Shape& shape : {Shape{"json", Json, 128}, Shape{"text", Text, 128}}) {
    for (int mode = 0; mode < 3; ++mode) {
      const bool compress = mode > 0, uncompressed_setter = mode == 2;
      CompactObj::SetCompression(compress);
      std::mt19937_64 rng(7);
      std::vector<std::string> pieces;
      for (size_t i = 0; i < 512; ++i) pieces.push_back(shape.make(rng, shape.size));
      CompactObj obj;
      std::string value;
      const int64_t t0 = CpuNs();
      for (const std::string& piece : pieces) {
        obj.GetString(&value);
        value += piece;
        if (uncompressed_setter) {
          obj.SetUncompressedString(value);
        } else {
          obj.SetString(value);
        }
      }
      const int64_t t1 = CpuNs();
      std::printf("| %s | %s | %s | %.0f | %zu |\n", shape.name,
                  uncompressed_setter ? "SetUncompressedString (APPEND)" : "SetString",
                  compress ? "on" : "off", double(t1 - t0) / pieces.size(), obj.MallocUsed());
    }
  }
  CompactObj::SetCompression(true);
  return 0;
}
