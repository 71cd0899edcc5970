#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/interned.h"

namespace lw = loopwarden;

TEST_CASE("Interned text reads as the string it was made from, and equal text is one entry") {
  const std::string owner = "alice@example.com (a long enough value to need the heap)";
  lw::Interned a = owner;
  lw::Interned b = std::string_view(owner);
  lw::Interned c = "bob@example.com";
  CHECK(a.str() == owner);
  CHECK(a.view() == owner);
  CHECK(&a.str() == &b.str());  // one copy of the text, shared
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a == owner);
  CHECK(owner == a);
  CHECK(c == "bob@example.com");
  CHECK("bob@example.com" == c);
  CHECK(c != std::string_view("bob@example.co"));
  CHECK(a < c);  // ordered by text ("alice" before "bob"), not by address
  CHECK((a <=> std::string("alice")) == std::strong_ordering::greater);
  CHECK("x:" + c == "x:bob@example.com");
  CHECK(c + "/y" == "bob@example.com/y");
  CHECK(c.size() == 15);
  CHECK(std::string(c.c_str()) == "bob@example.com");
}

TEST_CASE("an empty Interned is the empty string and takes nothing from the pool") {
  const size_t before = lw::Interned::PoolSize();
  lw::Interned none;
  lw::Interned blank = "";
  CHECK(none.empty());
  CHECK(blank.empty());
  CHECK(none == blank);
  CHECK(none == "");
  CHECK(none.str().empty());
  CHECK(lw::Interned::PoolSize() == before);
}

TEST_CASE("copies, moves and assignments keep each handle's text") {
  lw::Interned a = "H100";
  lw::Interned b = a;
  lw::Interned c = std::move(b);
  CHECK(b.empty());  // a moved-from handle is empty, not dangling
  CHECK(c == "H100");
  c = "B200";
  CHECK(a == "H100");
  CHECK(c == "B200");
  a = c;
  a = a;  // self-assignment keeps the text
  CHECK(a == "B200");
  a = std::move(a);
  CHECK(a == "B200");
  a = std::string("A100");
  CHECK(a == "A100");
  CHECK(c == "B200");
}

TEST_CASE("values nobody holds any longer are freed once the pool has grown") {
  const size_t start = lw::Interned::PoolSize();
  {
    std::vector<lw::Interned> gone;
    for (int i = 0; i < 3000; ++i) gone.emplace_back("retired-model-" + std::to_string(i));
    CHECK(lw::Interned::PoolSize() >= 3000);
  }
  // New values make the pool grow again; on the way it sweeps the 3,000 nobody holds.
  std::vector<lw::Interned> kept;
  for (int i = 0; i < 2000; ++i) kept.emplace_back("live-model-" + std::to_string(i));
  CHECK(lw::Interned::PoolSize() < start + 3000);
  CHECK(lw::Interned::PoolSize() >= 2000);
  for (int i = 0; i < 2000; ++i) REQUIRE(kept[static_cast<size_t>(i)] == "live-model-" + std::to_string(i));
  // A retired value interned again is a new entry with the same text.
  lw::Interned back = "retired-model-7";
  CHECK(back == "retired-model-7");
}

TEST_CASE("threads that intern, copy and drop the same values all read their own text") {
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &wrong] {
      for (int i = 0; i < 20000; ++i) {
        const std::string text = "status-" + std::to_string((i + t) % 1500);
        lw::Interned a = text;
        lw::Interned b = a;
        if (b != text || a != b) ++wrong[static_cast<size_t>(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int w : wrong) CHECK(w == 0);
}

TEST_CASE("a value in a thread's memo of recent values outlives the pool's sweeps: one entry per text") {
  const std::string text = "memo-kept-value-" + std::string(40, 'x');
  { lw::Interned dropped = text; }  // no handle holds it now; this thread's memo does
  // Another thread (its own memo) interns and drops thousands: the pool sweeps what
  // nobody holds, several times over.
  std::thread([] {
    for (int i = 0; i < 5000; ++i) lw::Interned churn = "sweep-churn-" + std::to_string(i);
  }).join();
  lw::Interned mine = text;  // from this thread's memo
  lw::Interned theirs;
  std::thread([&] { theirs = lw::Interned(text); }).join();  // from the pool
  CHECK(mine == text);
  CHECK(mine == theirs);  // the same entry: the memo's was never freed and pooled anew
}
