// gather_ahead: when the argmax gathers the next step's embedding row (the
// conditions of rules/gather_ahead.h).
#include <catch2/catch.hpp>

#include "rules/gather_ahead.h"

namespace lanec {
namespace {

// A step that starts with a plain gather of the token slot its one argmax writes.
GatherAheadQuery plain_step() {
  GatherAheadQuery q;
  q.embed_first = true;
  q.argmax_launches = 1;
  q.same_token = true;
  return q;
}

TEST_CASE("gather_ahead fires on a plain gather of the argmax's token", "[rules]") {
  const GatherAheadChoice c = choose_gather_ahead(plain_step());
  CHECK(c.fold);
  CHECK(c.declined == std::nullopt);
}

TEST_CASE("gather_ahead declines what the argmax's copy cannot stand in for", "[rules]") {
  GatherAheadQuery q = plain_step();
  q.embed_first = false;
  CHECK(choose_gather_ahead(q).declined == std::string("the step does not start with an embedding gather"));
  q = plain_step();
  q.argmax_launches = 2;
  CHECK(choose_gather_ahead(q).declined == std::string("the step has 2 argmax launches, not one"));
  q = plain_step();
  q.same_token = false;
  CHECK(choose_gather_ahead(q).declined == std::string("the gather reads another token slot than the argmax writes"));
  q = plain_step();
  q.embed_normed = true;
  CHECK(choose_gather_ahead(q).declined ==
        std::string("the gather norms its row (embed_norm): the argmax's gather only copies"));
}

}  // namespace
}  // namespace lanec
