// The contention tracker's rules for one observation
// (conflict/observation.h) as a table: each row is a watch update of our
// entry of a route, with the route's record before it, and what the tracker
// must do: the record afterwards, whether the update counts as contention,
// and which decision it notes.
#include "conflict/observation.h"

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace routestatus::conflict {
namespace {

using std::chrono::minutes;

const SteadyTime kNow = SteadyTime(std::chrono::hours(1));
const SteadyTime kBefore = kNow - minutes(1);
const SteadyTime kLater = kNow + minutes(1);
constexpr uint64_t kOld = 0x01;     // fingerprint of an older entry
constexpr uint64_t kOurs = 0x0a;    // of the entry we compute
constexpr uint64_t kTheirs = 0x7e;  // of another writer's entry

constexpr RouteState kCandidate = RouteState::kCandidate;
constexpr RouteState kSuspect = RouteState::kSuspect;
constexpr RouteState kContended = RouteState::kContended;

// A route's record; it entered its state a minute ago.
struct Rec {
  RouteRecord r;
  Rec(RouteState state, uint64_t last) {
    r.state = state;
    r.last = last;
    r.at = kBefore;
  }
  Rec& At(SteadyTime t) { r.at = t; return *this; }
  Rec& Suspected(SteadyTime t) { r.suspected = t; return *this; }
  Rec& ArmedUntil(SteadyTime t) { r.armed_until = t; return *this; }
  Rec& Own() { r.own = true; return *this; }
  Rec& Fought() { r.fought = true; return *this; }
  Rec& Probed() { r.probed = true; return *this; }
  Rec& Held() { r.held = true; return *this; }
  operator RouteRecord() const { return r; }
};

// By default: another writer changed an entry (kOld) to one we do not
// compute (kTheirs), in what only the configuration decides; no record, no
// cut-off.
struct Facts {
  ObservationFacts f;
  Facts() {
    f.had_entry = f.has_entry = f.computes_entry = true;
    f.new_print = kTheirs;
    f.now = kNow;
  }
  Facts& Of(RouteRecord r) { f.record = r; return *this; }
  Facts& Appeared() { f.had_entry = false; return *this; }
  Facts& Removed() {
    f.has_entry = false;
    f.new_print = 0;
    f.new_is_desired = !f.computes_entry;
    return *this;
  }
  Facts& WeKeepNone() {
    f.computes_entry = false;
    f.old_is_desired = false;
    f.new_is_desired = !f.has_entry;
    return *this;
  }
  Facts& FromOurs() { f.old_is_desired = true; return *this; }
  Facts& ToOurs() {
    f.new_is_desired = true;
    f.new_print = kOurs;
    return *this;
  }
  Facts& View() { f.view_only = true; return *this; }
  Facts& Cutoff() { f.cutoff = true; return *this; }
  operator ObservationFacts() const { return f; }
};

ObservationEffects Keep(const ObservationFacts& facts) { return {facts.record}; }
ObservationEffects Count(RouteRecord r) { return {r, /*counted=*/true}; }
ObservationEffects Note(RouteRecord r, ObservationNote note) { return {r, false, note}; }
ObservationEffects Drop() { return {}; }

struct Row {
  std::string behaviour;
  ObservationFacts facts;
  ObservationEffects want;
};

std::string Describe(const ObservationEffects& e) {
  const auto s = [](SteadyTime t) { return std::to_string((t - kNow) / std::chrono::seconds(1)); };
  std::ostringstream out;
  if (e.record) {
    const RouteRecord& r = *e.record;
    out << "state=" << static_cast<int>(r.state) << " at=" << s(r.at) << " last=" << r.last
        << " suspected=" << (r.suspected == SteadyTime{} ? "never" : s(r.suspected))
        << " armed_until=" << (r.armed_until == SteadyTime{} ? "never" : s(r.armed_until))
        << " own=" << r.own << " fought=" << r.fought << " probed=" << r.probed
        << " held=" << r.held;
  } else {
    out << "no record";
  }
  out << " counted=" << e.counted << " note=" << static_cast<int>(e.note);
  return out.str();
}

// The echo of our own removal is no evidence.
std::vector<Row> EchoRows() {
  const Rec removed_by_us = Rec(kCandidate, 0).Own();
  return {
    {"the echo of our own removal drops the record",
     Facts().WeKeepNone().Removed().Of(removed_by_us), Drop()},
    {"the echo of our own removal drops the record even when our view keeps the entry now",
     Facts().Removed().Of(removed_by_us), Drop()},
    {"the echo of our own removal keeps an armed record",
     Facts().Removed().Of(Rec(removed_by_us).ArmedUntil(kLater)),
     Keep(Facts().Of(Rec(removed_by_us).ArmedUntil(kLater)))},
    {"the echo of our own removal keeps a record that remembers a fight",
     Facts().Removed().Of(Rec(removed_by_us).Fought()),
     Keep(Facts().Of(Rec(removed_by_us).Fought()))},
  };
}

// The entry we compute is never contention.
std::vector<Row> DesiredRows() {
  const Rec suspect = Rec(kSuspect, kTheirs).Suspected(kBefore);
  return {
    {"no entry where we would have none: nothing to remember",
     Facts().WeKeepNone().Removed(), Drop()},
    {"the entry we compute on an unknown route is remembered as a Candidate",
     Facts().ToOurs(), Note(Rec(kCandidate, kOurs).At(kNow), ObservationNote::kDesired)},
    {"the entry we compute ends a suspicion without arming the route",
     Facts().ToOurs().Of(suspect),
     Note(Rec(kCandidate, kOurs).At(kNow).Suspected(kBefore), ObservationNote::kDesired)},
    {"the entry we compute ends a suspicion under the cut-off too",
     Facts().ToOurs().Cutoff().Of(suspect),
     Note(Rec(kCandidate, kOurs).At(kNow).Suspected(kBefore), ObservationNote::kDesired)},
    {"another writer setting the entry we compute ends a hold",
     Facts().ToOurs().Of(Rec(kContended, kTheirs).Probed().Held()),
     Note(Rec(kCandidate, kOurs).At(kNow).Probed(), ObservationNote::kDesired)},
    {"the echo of our own write keeps a hold",
     Facts().ToOurs().Of(Rec(kContended, kOurs).Own().Probed().Held()),
     Note(Rec(kContended, kOurs).Probed().Held(), ObservationNote::kDesired)},
    {"a peer's rewrite of a fought value is the probe",
     Facts().ToOurs().Of(Rec(kContended, kTheirs).Fought()),
     Note(Rec(kContended, kOurs).Probed(), ObservationNote::kDesired)},
  };
}

// Under the cut-off nothing counts, but a fight is remembered.
std::vector<Row> CutoffRows() {
  return {
    {"under the cut-off a view difference is not tracked",
     Facts().View().Cutoff().Of(Rec(kCandidate, kOld)),
     Keep(Facts().Of(Rec(kCandidate, kOld)))},
    {"under the cut-off a removal is not tracked",
     Facts().Removed().Cutoff().Of(Rec(kCandidate, kOld)),
     Keep(Facts().Of(Rec(kCandidate, kOld)))},
    {"under the cut-off a change where we keep no entry is not tracked",
     Facts().WeKeepNone().Cutoff().Of(Rec(kCandidate, kOld)),
     Keep(Facts().Of(Rec(kCandidate, kOld)))},
    {"under the cut-off an unknown route whose old entry was not ours is not tracked",
     Facts().Cutoff(), Drop()},
    {"under the cut-off an unknown route that lost what we compute is remembered as fought",
     Facts().FromOurs().Cutoff(), {Rec(kCandidate, kTheirs).At(kNow).Fought()}},
    {"under the cut-off the value we last saw again changes nothing",
     Facts().Cutoff().Of(Rec(kCandidate, kTheirs)),
     Keep(Facts().Of(Rec(kCandidate, kTheirs)))},
    {"under the cut-off a known route is marked fought, not counted",
     Facts().Cutoff().Of(Rec(kCandidate, kOurs).Own()),
     {Rec(kCandidate, kTheirs).At(kNow).Fought()}},
    {"under the cut-off an answer to our probe holds the route",
     Facts().Cutoff().Of(Rec(kCandidate, kOurs).Own().Probed()),
     {Rec(kContended, kTheirs).At(kNow).Fought().Probed().Held()}},
  };
}

// How another writer changes an entry we would not keep tells nothing.
std::vector<Row> NotKeptRows() {
  return {
    {"how another writer changes an entry we would not keep tells nothing",
     Facts().WeKeepNone(), Drop()},
    {"a changed entry we would not keep updates only what we last saw",
     Facts().WeKeepNone().Of(Rec(kSuspect, kOld).Suspected(kBefore)),
     Keep(Facts().Of(Rec(kSuspect, kTheirs).Suspected(kBefore)))},
  };
}

// The value we last wrote or saw, again.
std::vector<Row> NoEvidenceRows() {
  return {
    {"the value we last wrote or saw again is no new evidence",
     Facts().Of(Rec(kCandidate, kTheirs)), Keep(Facts().Of(Rec(kCandidate, kTheirs)))},
  };
}

// A view difference: Suspect, or counted on a Contended or armed route.
std::vector<Row> ViewRows() {
  return {
    {"a view difference makes an unknown route Suspect, not counted",
     Facts().View(),
     Note(Rec(kSuspect, kTheirs).At(kNow).Suspected(kNow), ObservationNote::kSuspect)},
    {"a view difference on a Candidate whose arming ran out makes it Suspect and disarms it",
     Facts().View().Of(Rec(kCandidate, kOurs).Own().ArmedUntil(kBefore)),
     Note(Rec(kSuspect, kTheirs).At(kNow).Suspected(kNow), ObservationNote::kSuspect)},
    {"another writer removing an entry we keep is a view difference",
     Facts().Removed().Of(Rec(kCandidate, kOurs)),
     Note(Rec(kSuspect, 0).At(kNow).Suspected(kNow), ObservationNote::kSuspect)},
    {"an entry created where we would have none is a view difference",
     Facts().Appeared().WeKeepNone(),
     Note(Rec(kSuspect, kTheirs).At(kNow).Suspected(kNow), ObservationNote::kSuspect)},
    {"a view difference on an armed route counts",
     Facts().View().Of(Rec(kCandidate, kOurs).Own().Suspected(kBefore).ArmedUntil(kLater)),
     Count(Rec(kContended, kTheirs).At(kNow).Suspected(kBefore).ArmedUntil(kLater).Fought())},
    {"a view difference on a Contended route counts",
     Facts().View().Of(Rec(kContended, kOld)),
     Count(Rec(kContended, kTheirs).At(kNow).Fought())},
  };
}

// A configuration difference counts, unless a stale entry was replaced.
std::vector<Row> ConfigurationRows() {
  return {
    {"a configuration difference on a known route counts",
     Facts().Of(Rec(kCandidate, kOurs).Own()),
     Count(Rec(kContended, kTheirs).At(kNow).Fought())},
    {"a configuration difference that answers our probe counts and holds the route",
     Facts().Of(Rec(kCandidate, kOurs).Own().Probed()),
     Count(Rec(kContended, kTheirs).At(kNow).Fought().Probed().Held())},
    {"another writer replacing what we compute on an unknown route counts",
     Facts().FromOurs(), Count(Rec(kContended, kTheirs).At(kNow).Fought())},
    {"another writer creating an entry we compute differently counts",
     Facts().Appeared(), Count(Rec(kContended, kTheirs).At(kNow).Fought())},
    {"a stale entry replaced on an unknown route is only a Candidate",
     Facts(), Note(Rec(kCandidate, kTheirs).At(kNow), ObservationNote::kCandidate)},
  };
}

const std::vector<Row>& Table() {
  static const std::vector<Row> rows = [] {
    std::vector<Row> all;
    for (auto group : {EchoRows, DesiredRows, CutoffRows, NotKeptRows, NoEvidenceRows,
                       ViewRows, ConfigurationRows}) {
      for (Row& row : group()) all.push_back(std::move(row));
    }
    return all;
  }();
  return rows;
}

TEST(ObservationTest, EachRowIsWhatTheTrackerDoes) {
  for (const Row& row : Table()) {
    EXPECT_EQ(Describe(InterpretObservation(row.facts)), Describe(row.want)) << row.behaviour;
  }
}

}  // namespace
}  // namespace routestatus::conflict
