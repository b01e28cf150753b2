#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "e2e/bench/bench_cluster.h"

namespace routestatus::e2e::bench {

// The routes a benchmark created and what each should show, and the
// change mix of (a): 40% create, 25% host change, 15% leave the shard
// (label router=internal), 20% delete. Changes go through the REST client;
// convergence is checked on the server's store. Not thread-safe.
class RouteModel {
 public:
  // Routes are spread over `namespaces` (created by the caller); `seed`
  // drives the change mix, so one seed gives one sequence of changes.
  RouteModel(BenchCluster& cluster, std::vector<std::string> namespaces, uint64_t seed);

  // Creates one route in the shard; returns "namespace/name".
  std::string Create();
  // One random change of the mix (`i` numbers it, for new hosts); returns
  // whether it needs a status write (deletes need none).
  bool RandomChange(int i);
  // `count` random changes paced at `rate` per second (numbered from 0);
  // returns how many need a status write.
  int RandomChanges(int count, double rate);
  // Gives a random in-shard route a new host (`i` numbers it); false when
  // there is none.
  bool ChangeHost(int i);

  // True if every live route shows what the model expects: in shard, our
  // entry Admitted with the model's host; out of shard, no entry.
  bool Converged(std::string* why = nullptr) const;
  // Waits until Converged and the server saw no status PUT for `quiet`.
  // Returns the seconds it took, or -1 on timeout (logged).
  double WaitConverged(std::chrono::seconds timeout, std::chrono::milliseconds quiet);

  size_t size() const { return routes_.size(); }

 private:
  struct Route {
    std::string ns;
    std::string name;
    std::string host;
    bool in_shard = true;
  };

  // Applies `mutate` to the route on the server; dies (CHECK) on failure.
  void Update(const Route& r, const std::function<void(nlohmann::json&)>& mutate);

  BenchCluster& cluster_;
  const std::vector<std::string> namespaces_;
  std::mt19937_64 rng_;
  std::map<std::string, Route> routes_;  // by "namespace/name"
  int next_id_ = 0;
};

}  // namespace routestatus::e2e::bench
