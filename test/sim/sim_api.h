#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeclient/kube_client.h"
#include "kubeclient/route.h"
#include "test/sim/delay.h"
#include "test/sim/scheduler.h"

namespace routestatus::sim {

// The two resources the simulated API serves.
enum class Kind { kRoute = 0, kNamespace = 1 };

// One stored version of an object: its JSON and its exact text. Shared by
// the store, the history and every watch that delivers it. Immutable.
struct StoredObject {
  std::string key;  // "ns/name" (routes) or "name" (namespaces)
  nlohmann::json json;
  std::string text;
  std::shared_ptr<const kubeclient::Route> route;  // routes: decoded once
  SteadyTime committed{};  // when the server stored this version (simulated time)
};
using ObjectPtr = std::shared_ptr<const StoredObject>;

// Knobs of the simulated API server. Value type.
struct SimApiOptions {
  // resourceVersions as opaque text: numbers in a scrambled order, so a
  // client that orders them numerically goes wrong (API conventions: they
  // are opaque). false: plain increasing numbers.
  bool opaque_versions = true;
  // Bookmarks are sent on every watch that asks for them, every U[min, max].
  Duration bookmark_min = std::chrono::seconds(5);
  Duration bookmark_max = std::chrono::seconds(60);
  // Fault injection: each event is lost for each watch with this
  // probability (a broken server; the checks must catch it).
  double drop_event_probability = 0;
};

// Counts of status PUTs, per writer. Value type.
struct PutCounts {
  int64_t attempts = 0;
  int64_t success = 0;
  int64_t conflicts = 0;
  // Of the conflicts: those whose guarded version only owners' updates
  // replaced (no status write since): the owner changed the route while
  // the PUT was on its way, which no lease can prevent.
  int64_t owner_conflicts = 0;
  int64_t not_found = 0;
  int64_t errors = 0;  // injected permanent errors
};

class SimWatch;

// Requests and watch events the simulator delayed (the slow part of their
// Delay) to more than the takeover floor: to a follower, a live leader
// behind such a delay looks dead (test/sim/README.md, the PUT bound).
struct Stalls {
  static constexpr Duration kFloor = std::chrono::milliseconds(500);
  int64_t requests = 0;  // a status request (PUT, PATCH, the GET after a 409) reaching the server
  // Status writes (PUT or PATCH, never a GET) whose request or answer leg
  // was stalled, each counted once: the only stalls the honest PUT bound
  // allows for (test/sim/README.md, issue 46).
  int64_t writes = 0;
  int64_t answers = 0;   // its answer reaching the replica
  int64_t events = 0;  // a route watch event
  int64_t write_events = 0;  // of which the event of a replica's status write
  // A namespace watch event, by its version (once per stalled delivery):
  // the replica's view of the shard is that much behind the server's.
  std::vector<int64_t> namespace_event_seqs;
  // Counts `delay` when its slow part made it longer than kFloor.
  static bool Stalled(Duration delay, Duration slow_part) {
    return slow_part > Duration::zero() && delay > kFloor;
  }
};

// The one API server of a simulation: routes (with a status subresource)
// and namespaces in memory, one global resourceVersion, a history of
// changes from which watches are served, compaction (410 Gone), paginated
// lists from a snapshot, bookmarks and watch timeouts. Owners' operations
// and status PUTs run on the main thread at their server-side time. Not
// thread-safe (one thread runs at a time).
class SimApi {
 public:
  // Called after each successful status write by `writer`: the version it
  // replaced (the one its resourceVersion guard named) and the new one.
  using WriteObserver =
      std::function<void(int writer, const StoredObject& before, const StoredObject& written)>;
  // Called after each status PUT that failed with a conflict.
  using ConflictObserver = std::function<void(int writer, const std::string& key)>;
  // Asked at each status write that reaches the server (before its
  // resourceVersion guard): true makes a racing peer of the same router
  // name land the very same request first, as if another replica had taken
  // the same change over a moment earlier, so this one gets a 409 (a lost
  // takeover race). The peer's write is reported to the write observer as
  // `writer`'s (it wrote what `writer` would have) and counted as a PUT of
  // its own (kRacingPeer).
  using RaceHook = std::function<bool(int writer, const std::string& key)>;
  static constexpr int kRacingPeer = 1000;
  // Called when a watch hands replica `receiver`'s client the event of
  // `key`'s version `seq` (the time it reached that replica).
  using DeliveryObserver =
      std::function<void(Kind kind, const std::string& key, int64_t seq, int receiver)>;

  // Called when the answer to a request on one object (a status write, a
  // GET) reaches replica `writer`: when it was sent, how long the simulated
  // network held it back past its usual latency (request and answer legs,
  // Stalls), and whether a racing peer beat it (RaceHook).
  using AnswerObserver = std::function<void(int writer, const std::string& key, SteadyTime sent,
                                            Duration stall, bool raced)>;

  SimApi(Scheduler& scheduler, std::mt19937_64& rng, SimApiOptions options);
  ~SimApi();

  void SetWriteObserver(WriteObserver observer) { write_observer_ = std::move(observer); }
  void SetConflictObserver(ConflictObserver observer) { conflict_observer_ = std::move(observer); }
  void SetRaceHook(RaceHook hook) { race_hook_ = std::move(hook); }
  void SetAnswerObserver(AnswerObserver observer) { answer_observer_ = std::move(observer); }
  const AnswerObserver& answer_observer() const { return answer_observer_; }
  // Whether the race hook fired for the status write being applied; read
  // (and reset) by the client right after it applied the request.
  bool TakeRaced() { return std::exchange(raced_, false); }
  // While a status request is applied: how much longer than its usual
  // latency the simulated network held it back (a stall, Stalls); zero
  // otherwise. The write observer may read it.
  Duration request_stall() const { return request_stall_; }
  // While a status write is applied: the delay the simulator injected into
  // its request leg beyond the usual U[0, put latency) (the stall, plus the
  // slow leader's 500 ms); the only part the honest failover figure may
  // leave out. Zero otherwise.
  Duration request_injected() const { return request_injected_; }
  void set_request_delays(Duration stall, Duration injected) {
    request_stall_ = stall;
    request_injected_ = injected;
  }
  // Applies to watches opened afterwards.
  void SetDeliveryObserver(DeliveryObserver observer) { delivery_observer_ = std::move(observer); }
  // The version of the last change committed (the global sequence).
  int64_t last_seq() const { return seq_; }
  Stalls& stalls() { return stalls_; }
  const Stalls& stalls() const { return stalls_; }

  // Owners' operations (applied now). `host` "" leaves spec.host empty (the
  // router's hostname template applies). False when the object does not
  // exist (or already exists, for the creates).
  bool CreateNamespace(const std::string& name, const std::map<std::string, std::string>& labels);
  bool SetNamespaceLabel(const std::string& name, const std::string& label,
                         const std::string& value);
  bool CreateRoute(const std::string& ns, const std::string& name, const std::string& host,
                   const std::map<std::string, std::string>& labels);
  bool SetRouteHost(const std::string& key, const std::string& host);
  bool SetRouteLabel(const std::string& key, const std::string& label, const std::string& value);
  // Updates that leave our entry alone: an annotation, and the host of the
  // other router name's entry (as that router writes it).
  bool SetRouteAnnotation(const std::string& key, const std::string& name,
                          const std::string& value);
  bool SetOtherRouterHost(const std::string& key, const std::string& host);
  // `undecodable_final_state`: the DELETED event carries a final state that
  // no client decodes (spec is not an object), as after an update a newer
  // API accepted and our decoder rejects; the informer's decode-failure
  // delete path must still remove the route.
  bool DeleteRoute(const std::string& key, bool undecodable_final_state = false);

  // The API as clients see it at the server-side time of the request.
  // One page of a list: the first page snapshots the whole collection;
  // later pages (continue tokens) read that snapshot, or 410 once
  // compaction passed it. `receiver` >= 0: the replica whose client gets
  // the page; the delivery observer hears of each item (a relist brings a
  // change as a watch event does).
  StatusOr<kubeclient::ListPage> List(Kind kind, const kubeclient::ListOptions& o,
                                      int receiver = -1);
  // The same page with each item as its stored text (what ListRaw gives).
  StatusOr<kubeclient::RawListPage> ListRaw(Kind kind, const kubeclient::ListOptions& o,
                                            int receiver = -1);
  // Opens a watch from o.resource_version ("" = now). 410 at once when the
  // version was compacted; otherwise the missed history, then live events,
  // each delivered after `lag` (in order), bookmarks, and the end at
  // o.timeout.
  // `receiver`: the replica whose client opens it (for the delivery observer).
  StatusOr<std::shared_ptr<SimWatch>> Watch(Kind kind, const kubeclient::WatchOptions& o,
                                                        const Delay& lag, int receiver);
  // PUT .../routes/NAME/status on behalf of `writer`: 409 on a stale
  // resourceVersion or uid, 404 when gone, the injected error for a route
  // in `fail_status_of`; success replaces only .status.
  StatusOr<nlohmann::json> ApplyStatus(int writer, const nlohmann::json& body);
  // PATCH .../routes/NAME/status with a JSON merge patch on behalf of
  // `writer`, `key` = "ns/name": as ApplyStatus, but guarded only when the
  // patch names metadata.resourceVersion (409 when stale), and success
  // merges the patch's .status into the stored one.
  StatusOr<nlohmann::json> ApplyStatusPatch(int writer, const std::string& key,
                                            const nlohmann::json& patch);

  // Faults. Compact: versions before now can no longer be watched from or
  // continued (410); each open watch is also ended with a 410 ERROR event
  // with probability `end_watches`. DropWatches: each open watch of `kind`
  // ends at once with a connection reset with probability `p` (events not
  // yet delivered are lost to it).
  void Compact(double end_watches);
  void DropWatches(Kind kind, double p);
  // Lists and watches of `kind` fail with 403 until `until` (RBAC missing).
  void ForbidUntil(Kind kind, SteadyTime until) { forbid_until_[static_cast<int>(kind)] = until; }
  // Status PUTs of these routes fail with this (e.g. 422 invalid).
  std::map<std::string, Status> fail_status_of;
  // GET of one object as a client sees it: 404 when it does not exist.
  StatusOr<nlohmann::json> Get(Kind kind, const std::string& key) const;

  // The current state, for the simulation's checks.
  std::vector<std::shared_ptr<const kubeclient::Route>> Routes() const;
  std::shared_ptr<const kubeclient::Route> Route(const std::string& key) const;
  // Namespace -> labels.
  std::map<std::string, std::map<std::string, std::string>> Namespaces() const;
  // Key -> resourceVersion of every object of `kind`.
  std::map<std::string, std::string> Versions(Kind kind) const;
  const std::map<int, PutCounts>& puts_by_writer() const { return puts_; }
  PutCounts TotalPuts() const;
  int64_t puts_of(const std::string& key) const {
    auto it = puts_by_key_.find(key);
    return it == puts_by_key_.end() ? 0 : it->second;
  }
  size_t open_watches() const;

 private:
  // A status write of route `key`: guarded by `rv` and `uid` when given;
  // on success the stored .status becomes status_of(stored object).
  StatusOr<nlohmann::json> WriteStatus(
      int writer, const std::string& key, const std::optional<std::string>& rv,
      const std::optional<std::string>& uid,
      const std::function<nlohmann::json(const nlohmann::json&)>& status_of);

  struct HistoryEvent {
    int64_t seq = 0;
    Kind kind = Kind::kRoute;
    kubeclient::WatchEventType type = kubeclient::WatchEventType::kAdded;
    ObjectPtr object;
    bool status_write = false;  // a replica's status write made this version
  };
  struct Snapshot {
    int64_t seq = 0;
    std::vector<ObjectPtr> items;
  };
  // The items of one page; sets *version and *next (the continue token).
  StatusOr<std::vector<ObjectPtr>> Page(Kind kind, const kubeclient::ListOptions& o,
                                        std::string* version, std::string* next, int receiver);

  std::string Version(int64_t seq) const;
  std::optional<int64_t> SeqOf(const std::string& version) const;
  // Stamps the next version into `object`, stores it and emits the event.
  void Commit(Kind kind, const std::string& key, nlohmann::json object,
              kubeclient::WatchEventType type);
  void Emit(const HistoryEvent& event);
  // Commits `change` applied to a copy of the stored object; false if absent.
  bool Modify(Kind kind, const std::string& key,
              const std::function<void(nlohmann::json&)>& change);
  void ScheduleBookmark(const std::shared_ptr<SimWatch>& watch);
  bool Forbidden(Kind kind, Status* status) const;

  Scheduler& scheduler_;
  std::mt19937_64& rng_;
  const SimApiOptions options_;
  std::map<std::string, ObjectPtr> objects_[2];
  std::deque<HistoryEvent> history_;  // seq > compacted_
  int64_t seq_ = 1000;
  int64_t compacted_ = 1000;  // watching from before this version is 410
  int64_t next_uid_ = 1;
  int64_t next_snapshot_ = 1;
  std::map<int64_t, Snapshot> snapshots_;
  std::unordered_map<std::string, int64_t> seq_of_;
  std::vector<std::weak_ptr<SimWatch>> watches_;
  SteadyTime forbid_until_[2] = {};
  std::map<int, PutCounts> puts_;
  std::map<std::string, int64_t> puts_by_key_;
  std::unordered_map<std::string, int64_t> last_status_write_seq_;  // by route key
  bool committing_status_write_ = false;  // while WriteStatus commits
  WriteObserver write_observer_;
  ConflictObserver conflict_observer_;
  Duration request_stall_ = Duration::zero();
  Duration request_injected_ = Duration::zero();
  RaceHook race_hook_;
  bool raced_ = false;
  AnswerObserver answer_observer_;
  DeliveryObserver delivery_observer_;
  Stalls stalls_;
};

// The server side of one open watch: events queued with the time they reach
// the client (in order), and how the stream ends. Not thread-safe.
class SimWatch {
 public:
  // `stalls`: counts this watch's stalled events (may be null); it must
  // outlive the pushes.
  SimWatch(Kind kind, const SimClock& clock, Delay lag, std::mt19937_64& rng,
           SimApi::DeliveryObserver delivered = nullptr, Stalls* stalls = nullptr,
           int receiver = -1)
      : kind_(kind),
        clock_(clock),
        lag_(lag),
        rng_(rng),
        delivered_(std::move(delivered)),
        stalls_(stalls),
        receiver_(receiver) {}

  Kind kind() const { return kind_; }
  // Not cancelled, and not ended as of now.
  bool open() const { return !cancelled_ && (!end_ || end_->first > clock_.Now()); }
  // Queues `event` to arrive after a lag drawn now, never before the
  // previous one (one stream delivers in order). `key` and `seq` name the
  // object's version, for the delivery observer ("" for none).
  // `status_write`: a replica's status write made that version.
  void Push(kubeclient::WatchEvent event, const std::string& key = "", int64_t seq = 0,
            bool status_write = false);
  // Queues a 410 Gone ERROR event (expired history); the stream then ends.
  void PushGone();
  // The stream ends at `at` with `status` (events arriving later are lost).
  void End(SteadyTime at, Status status);
  void Cancel() { cancelled_ = true; }

  // The client side: the next event or the end, if it has arrived by now.
  std::optional<StatusOr<kubeclient::WatchEvent>> Poll();
  // When Poll() next has something (nullopt: not until more is pushed).
  std::optional<SteadyTime> ReadyAt() const;
  bool allow_bookmarks = false;

 private:
  const Kind kind_;
  const SimClock& clock_;
  const Delay lag_;
  std::mt19937_64& rng_;
  const SimApi::DeliveryObserver delivered_;
  Stalls* const stalls_;
  const int receiver_;  // the replica it delivers to (-1: none named)
  struct Queued {
    SteadyTime at;
    kubeclient::WatchEvent event;
    std::string key;
    int64_t seq = 0;
  };
  std::deque<Queued> queue_;
  SteadyTime last_{};
  std::optional<std::pair<SteadyTime, Status>> end_;
  bool cancelled_ = false;
};

// How long a replica's requests take. Value type.
struct ClientDelays {
  Delay list_page;    // each list page
  Delay put_request;  // a status PUT reaching the server
  Delay put_response; // its answer reaching the replica
  Delay watch;        // each watch event reaching the replica
};

// The KubeClient of one replica: lists, watches and status PUTs against
// the SimApi with this replica's delays; a call that waits parks the
// calling fiber. Close() (a crash) makes waiting and later calls fail
// promptly; a PUT already sent is still applied by the server. Get,
// Create, Update and Delete are not used by the controller: kInternal.
class SimClient final : public kubeclient::KubeClient {
 public:
  SimClient(Scheduler& scheduler, SimApi& api, std::mt19937_64& rng, int writer,
            ClientDelays delays);
  ~SimClient() override;

  void Close();
  bool InFlight() const { return in_flight_ > 0; }
  // A network partition until `until`: requests sent meanwhile get no
  // answer (each fails at the partition's end, as a client timeout would),
  // open watches deliver nothing and end with a reset at its end. PUTs
  // already on their way are applied and answered.
  void Partition(SteadyTime until) { *cut_until_ = until; }
  // Mutation (test only, SimOptions::mutant): every status write is sent a
  // second time once the first is answered, as a controller that repeats
  // its writes would; the caller sees the first answer.
  void set_send_writes_twice(bool twice) { send_writes_twice_ = twice; }

  StatusOr<nlohmann::json> Get(const kubeclient::ResourceRef&, const std::string&,
                                           const std::string&) override;
  StatusOr<kubeclient::ListPage> List(const kubeclient::ResourceRef& res,
                                                  const std::string& ns,
                                                  const kubeclient::ListOptions& options) override;
  StatusOr<kubeclient::RawListPage> ListRaw(
      const kubeclient::ResourceRef& res, const std::string& ns,
      const kubeclient::ListOptions& options) override;
  StatusOr<std::unique_ptr<kubeclient::WatchStream>> Watch(
      const kubeclient::ResourceRef& res, const std::string& ns,
      const kubeclient::WatchOptions& options) override;
  StatusOr<nlohmann::json> Create(const kubeclient::ResourceRef&, const std::string&,
                                              const nlohmann::json&) override;
  StatusOr<nlohmann::json> Update(const kubeclient::ResourceRef&,
                                              const nlohmann::json&) override;
  StatusOr<nlohmann::json> UpdateStatus(const kubeclient::ResourceRef& res,
                                                    const nlohmann::json& object) override;
  StatusOr<nlohmann::json> MergePatchStatus(const kubeclient::ResourceRef& res,
                                            const std::string& ns, const std::string& name,
                                            const nlohmann::json& patch) override;
  Status Delete(const kubeclient::ResourceRef&, const std::string&,
                            const std::string&) override;

 private:
  // Waits a list page's delay; false when closed meanwhile.
  bool WaitListPage();
  // Sends a request on one object (a status write, a GET) with the status
  // PUT's delays: `apply` runs on the server after the request's delay,
  // its answer comes back after the response's delay.
  // `write`: a status write (counted in Stalls::writes when stalled).
  StatusOr<nlohmann::json> SendOneObjectRequest(
      const std::string& key, bool write,
      std::function<StatusOr<nlohmann::json>(SimApi&, int writer)> apply);
  // A status write, sent twice with send_writes_twice_.
  StatusOr<nlohmann::json> SendWrite(
      const std::string& key, std::function<StatusOr<nlohmann::json>(SimApi&, int writer)> apply);
  // Parks the calling fiber until `ready` or Close().
  void ParkUntil(const std::function<std::optional<SteadyTime>()>& ready);
  // While partitioned: parks until the partition ends and returns true
  // (the request got no answer); false at once otherwise.
  bool WaitOutPartition();

  Scheduler& scheduler_;
  SimApi& api_;
  std::mt19937_64& rng_;
  const int writer_;
  const ClientDelays delays_;
  std::shared_ptr<bool> closed_ = std::make_shared<bool>(false);
  std::shared_ptr<SteadyTime> cut_until_ = std::make_shared<SteadyTime>();
  int in_flight_ = 0;  // status PUTs sent and not answered
  bool send_writes_twice_ = false;
};

}  // namespace routestatus::sim
