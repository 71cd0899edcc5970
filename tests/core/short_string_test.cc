// ShortString: 16 bytes, text up to 15 bytes inline, and read like a std::string.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <utility>

#include "core/short_string.h"

using loopwarden::ShortString;

static_assert(sizeof(ShortString) == 16);

TEST_CASE("a short string holds any text, inline up to 15 bytes, NUL-terminated either way") {
  const ShortString empty;
  CHECK(empty.empty());
  CHECK(empty.size() == 0);
  CHECK(std::string(empty.c_str()).empty());
  CHECK(ShortString("").view().empty());

  const std::string with_nul("a\0b", 3);
  for (const std::string& text : {std::string("k4q95w5"), with_nul, std::string(14, 'a'), std::string(15, 'b'),
                                  std::string(16, 'c'), std::string("ts-") + std::string(32, 'd'), std::string(600, 'x')}) {
    CAPTURE(text.size());
    const ShortString s(text);
    CHECK(s.on_heap() == (text.size() > ShortString::kInline));
    CHECK(s.size() == text.size());
    CHECK(s.view() == text);
    CHECK(static_cast<std::string>(s) == text);
    CHECK(s.c_str()[text.size()] == '\0');
    CHECK(std::string_view(s.c_str(), s.size()) == text);
    CHECK(s == text);
    CHECK(text == s);
  }
  // A heap block reused from freed text still ends where this text does.
  { const ShortString junk(std::string(47, 'J')); }
  const ShortString reused(std::string(40, 'k'));
  CHECK(reused.c_str()[40] == '\0');
}

TEST_CASE("a short string copies, moves and assigns, inline and on the heap, its own text included") {
  const std::string long_text(40, 'L');
  for (const std::string& text : {std::string("short"), long_text}) {
    CAPTURE(text.size());
    ShortString a(text);
    ShortString b = a;
    CHECK(b == text);
    CHECK(a == b);
    ShortString c = std::move(a);
    CHECK(c == text);
    CHECK(a.empty());  // NOLINT: a moved-from short string is empty
    a = c;
    CHECK(a == text);
    a = a;  // NOLINT: self-assignment keeps the text
    CHECK(a == text);
    a = a.view().substr(1);  // a view of its own text
    CHECK(a == text.substr(1));
    a = "x";
    CHECK(a == "x");
    CHECK_FALSE(a.on_heap());
    a = long_text;
    CHECK(a == long_text);
    c = std::move(a);
    CHECK(c == long_text);
    CHECK(a.empty());  // NOLINT
  }
}

TEST_CASE("a short string compares, orders, concatenates and prints like text") {
  const ShortString id("k4q95w5");
  const ShortString long_id(std::string(20, 'z'));
  CHECK(id < long_id);
  CHECK(id < std::string("l"));
  CHECK(id > "a");
  CHECK(id != "k4q95w6");
  CHECK(id != long_id);
  CHECK("run " + id == "run k4q95w5");
  CHECK(std::string("run ") + id == "run k4q95w5");
  CHECK(id + "/x" == "k4q95w5/x");
  CHECK(id + std::string("/y") == "k4q95w5/y");
  CHECK(id + id == "k4q95w5k4q95w5");
  CHECK(id.substr(1, 3) == "4q9");
  std::ostringstream os;
  os << id << "|" << long_id;
  CHECK(os.str() == "k4q95w5|" + std::string(20, 'z'));
}

TEST_CASE("a short string made of parts holds their text, inline or on the heap, at every length") {
  // Every split of texts of 0 to 40 bytes into three parts: the same text and size as
  // the one string made whole, NUL-terminated, inline exactly when 15 bytes or fewer.
  const std::string text = "loops deployment k4q95w5-abcdefghijklmnop";
  for (size_t n = 0; n <= 40; ++n) {
    const std::string whole = text.substr(0, n);
    for (size_t i = 0; i <= n; ++i) {
      for (size_t j = i; j <= n; ++j) {
        CAPTURE(n);
        CAPTURE(i);
        CAPTURE(j);
        const ShortString s = ShortString::Concat(std::string_view(whole).substr(0, i),
                                                          std::string_view(whole).substr(i, j - i),
                                                          std::string_view(whole).substr(j));
        REQUIRE(s.view() == whole);
        CHECK(s.size() == n);
        CHECK(s.c_str()[n] == '\0');
        CHECK(s.on_heap() == (n > ShortString::kInline));
      }
    }
  }
  CHECK(ShortString::Concat("sampler ", "k4q95w5") == "sampler k4q95w5");
  CHECK(ShortString::Concat({}, {}).empty());
}
