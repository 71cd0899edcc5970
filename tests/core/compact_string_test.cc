// CompactString: 8 bytes, empty without a heap block, and read like a std::string.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <utility>

#include "core/compact_string.h"

using loopwarden::CompactString;

static_assert(sizeof(CompactString) == 8);

TEST_CASE("a compact string holds any text, and empty text as nothing") {
  const CompactString empty;
  CHECK(empty.empty());
  CHECK(empty.size() == 0);
  CHECK(empty.view().data() == nullptr);  // no block behind it
  CHECK(CompactString("").view().data() == nullptr);
  CHECK(CompactString(std::string()).empty());

  const std::string with_nul("a\0b", 3);
  const std::string longer(600, 'x');
  for (const std::string& text : {std::string("c3"), with_nul, longer}) {
    CAPTURE(text.size());
    const CompactString s(text);
    CHECK_FALSE(s.empty());
    CHECK(s.size() == text.size());
    CHECK(s.view() == text);
    CHECK(static_cast<std::string>(s) == text);
    CHECK(s == text);
    CHECK(s == CompactString(text));
    CHECK_FALSE(s == empty);
  }
}

TEST_CASE("a compact string copies, moves and reassigns without sharing its text") {
  CompactString a("accounts/acme/trainingSessions/s1/checkpoints/step-40");
  CompactString b = a;  // a copy has its own block
  CHECK(b == a);
  CHECK(b.view().data() != a.view().data());
  a = "final";
  CHECK(a == "final");
  CHECK(b == "accounts/acme/trainingSessions/s1/checkpoints/step-40");
  CompactString c = std::move(b);
  CHECK(c == "accounts/acme/trainingSessions/s1/checkpoints/step-40");
  CHECK(b.empty());  // NOLINT: moved from, by design empty
  c = a;
  CHECK(c == "final");
  const CompactString& same = c;
  c = same;  // self-assignment keeps the text
  CHECK(c == "final");
  c = std::string();
  CHECK(c.empty());
  CompactString& also = a;
  a = std::move(also);  // and so does self-move
  CHECK(a == "final");
}

TEST_CASE("a compact string concatenates and prints as its text") {
  const CompactString s("c3");
  CHECK("promote " + s + " as m" == "promote c3 as m");
  CHECK(s + "/x" == "c3/x");
  CHECK(std::string("x") + CompactString() == "x");
  std::ostringstream os;
  os << s << '|' << CompactString();
  CHECK(os.str() == "c3|");
}
