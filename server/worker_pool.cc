#include "server/worker_pool.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace tilec::server {

WorkerPool::WorkerPool(PoolOptions options, cache::Clock* clock)
    : options_(options), clock_(clock) {
  if (options_.background_ticker) {
    ticker_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(ticker_mu_);
      while (!stop_) {
        ticker_cv_.wait_for(lock, std::chrono::milliseconds(100));
        if (stop_) break;
        lock.unlock();
        Tick();
        lock.lock();
      }
    });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(ticker_mu_);
    stop_ = true;
  }
  ticker_cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

// Runs the callbacks collected under the lock once it is released.
static void RunAll(std::vector<std::function<void()>>& after) {
  for (auto& f : after) f();
  after.clear();
}

absl::StatusOr<int64_t> WorkerPool::Register(const tilec::v1::WorkerHello& hello,
                                             const std::string& peer,
                                             std::shared_ptr<WorkerLink> link) {
  std::vector<std::function<void()>> after;
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [_, w] : workers_) {
      if (w.status.worker_id() == hello.worker_id()) {
        return absl::AlreadyExistsError(
            absl::StrCat("a worker named ", hello.worker_id(), " is already connected"));
      }
    }
    id = next_worker_++;
    Worker& w = workers_[id];
    w.status.set_worker_id(hello.worker_id());
    *w.status.mutable_device() = hello.device();
    w.status.set_profile(hello.profile());
    w.status.set_peer(peer);
    w.link = std::move(link);
    w.last_seen = clock_->Now();
    UpdateStateLocked(w);
    DispatchLocked(after);
  }
  RunAll(after);
  return id;
}

void WorkerPool::UpdateStateLocked(Worker& w) {
  w.status.set_state(w.draining ? "draining" : w.job.empty() ? "idle" : "busy");
}

void WorkerPool::OnMessage(int64_t worker, const tilec::v1::WorkerMessage& m) {
  std::vector<std::function<void()>> after;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto wit = workers_.find(worker);
    if (wit == workers_.end()) return;
    Worker& w = wit->second;
    w.last_seen = clock_->Now();
    if (m.has_draining()) {
      w.draining = true;
    } else if (m.has_started()) {
      auto jit = jobs_.find(m.started().job_id());
      if (jit != jobs_.end() && jit->second.worker == worker &&
          jit->second.job.lease() == m.started().lease()) {
        Job& j = jit->second;
        j.started = true;
        j.deadline = clock_->Now() + absl::Seconds(j.job.lease_seconds());
      }
    } else if (m.has_result()) {
      const tilec::v1::MeasureResult& r = m.result();
      if (w.job == r.job_id()) w.job.clear();
      auto jit = jobs_.find(r.job_id());
      // A result for an expired or reassigned lease is ignored.
      if (jit != jobs_.end() && jit->second.worker == worker &&
          jit->second.job.lease() == r.lease()) {
        MeasureOutcome outcome{r, w.status};
        w.status.set_jobs_done(w.status.jobs_done() + 1);
        Done done = std::move(jit->second.done);
        jobs_.erase(jit);
        ++counters_.jobs_completed;
        after.push_back([done = std::move(done), outcome = std::move(outcome)]() mutable {
          done(std::move(outcome));
        });
      }
    }
    UpdateStateLocked(w);
    DispatchLocked(after);
  }
  RunAll(after);
}

void WorkerPool::OnDisconnect(int64_t worker) {
  std::vector<std::function<void()>> after;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto wit = workers_.find(worker);
    if (wit == workers_.end()) return;
    // The link is going away: never call it again.
    wit->second.link = nullptr;
    DropWorkerLocked(worker, absl::UnavailableError("disconnected"), after);
    DispatchLocked(after);
  }
  RunAll(after);
}

void WorkerPool::DropWorkerLocked(int64_t worker, const absl::Status& why,
                                  std::vector<std::function<void()>>& after) {
  auto wit = workers_.find(worker);
  if (wit == workers_.end()) return;
  Worker w = std::move(wit->second);
  workers_.erase(wit);
  ++counters_.workers_lost;
  std::fprintf(stderr, "tilecd: worker %s (%s) dropped: %s\n", w.status.worker_id().c_str(),
               w.status.profile().c_str(), std::string(why.message()).c_str());
  std::vector<std::pair<std::string, bool>> held;  // RequeueLocked may erase from jobs_
  for (const auto& [id, j] : jobs_) {
    if (j.worker == worker) held.emplace_back(id, j.started);
  }
  for (const auto& [id, started] : held) RequeueLocked(id, /*worker_died=*/started, after);
  if (w.link != nullptr) {
    std::shared_ptr<WorkerLink> link = w.link;
    after.push_back([link, why] { link->Close(why); });
  }
}

void WorkerPool::RequeueLocked(const std::string& id, bool worker_died,
                               std::vector<std::function<void()>>& after) {
  auto jit = jobs_.find(id);
  if (jit == jobs_.end()) return;
  Job& j = jit->second;
  if (worker_died) ++j.deaths;
  if (j.deaths >= options_.poison_after_deaths) {
    ++counters_.jobs_poisoned;
    Done done = std::move(j.done);
    const int deaths = j.deaths;
    jobs_.erase(jit);
    after.push_back([done = std::move(done), deaths, id] {
      done(absl::AbortedError(absl::StrCat("job ", id, " is poisoned: ", deaths,
                                           " workers died running it; not retried")));
    });
    return;
  }
  j.worker = 0;
  j.started = false;
  ++counters_.jobs_requeued;
  queue_.push_front(id);
}

void WorkerPool::DispatchLocked(std::vector<std::function<void()>>& after) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    auto jit = jobs_.find(*it);
    if (jit == jobs_.end()) {
      it = queue_.erase(it);
      continue;
    }
    Job& j = jit->second;
    Worker* chosen = nullptr;
    int64_t chosen_id = 0;
    for (auto& [wid, w] : workers_) {
      if (w.status.profile() == j.profile && w.job.empty() && !w.draining && w.link != nullptr) {
        chosen = &w;
        chosen_id = wid;
        break;
      }
    }
    if (chosen == nullptr) {
      ++it;
      continue;
    }
    j.worker = chosen_id;
    j.started = false;
    j.offered_at = clock_->Now();
    j.job.set_lease(next_lease_++);
    chosen->job = jit->first;
    UpdateStateLocked(*chosen);
    tilec::v1::WorkerCommand command;
    *command.mutable_job() = j.job;
    std::shared_ptr<WorkerLink> link = chosen->link;
    after.push_back([link, command = std::move(command)] { link->Send(command); });
    it = queue_.erase(it);
  }
}

std::string WorkerPool::Submit(const std::string& profile, tilec::v1::MeasureJob job, Done done) {
  std::vector<std::function<void()>> after;
  std::string id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = absl::StrCat("job-", next_job_++);
    job.set_job_id(id);
    Job& j = jobs_[id];
    j.profile = profile;
    j.job = std::move(job);
    j.done = std::move(done);
    ++counters_.jobs_submitted;
    queue_.push_back(id);
    DispatchLocked(after);
  }
  RunAll(after);
  return id;
}

void WorkerPool::Cancel(const std::vector<std::string>& job_ids) {
  std::vector<std::function<void()>> after;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& id : job_ids) {
      auto jit = jobs_.find(id);
      if (jit == jobs_.end()) continue;
      Done done = std::move(jit->second.done);
      // A worker running it stays busy until it reports (the result is
      // then ignored).
      jobs_.erase(jit);
      after.push_back([done = std::move(done)] { done(absl::CancelledError("cancelled")); });
    }
  }
  RunAll(after);
}

void WorkerPool::Tick() {
  std::vector<std::function<void()>> after;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = clock_->Now();
    std::vector<int64_t> dead;
    for (const auto& [id, w] : workers_) {
      if (now - w.last_seen > options_.heartbeat_timeout) dead.push_back(id);
    }
    for (int64_t id : dead) {
      DropWorkerLocked(id,
                       absl::DeadlineExceededError(absl::StrCat(
                           "no heartbeat for ", absl::FormatDuration(options_.heartbeat_timeout))),
                       after);
    }
    std::vector<std::string> expired, unstarted;
    for (const auto& [id, j] : jobs_) {
      if (j.worker == 0) continue;
      if (j.started && now > j.deadline) expired.push_back(id);
      if (!j.started && now - j.offered_at > options_.heartbeat_timeout) unstarted.push_back(id);
    }
    for (const std::string& id : expired) {
      ++counters_.leases_expired;
      std::fprintf(stderr, "tilecd: the lease of %s expired; it goes to another worker\n",
                   id.c_str());
      RequeueLocked(id, /*worker_died=*/false, after);
    }
    for (const std::string& id : unstarted) RequeueLocked(id, false, after);
    DispatchLocked(after);
  }
  RunAll(after);
}

int WorkerPool::WorkersFor(const std::string& profile) const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& [_, w] : workers_) n += w.status.profile() == profile && !w.draining;
  return n;
}

std::vector<tilec::v1::WorkerStatus> WorkerPool::Workers() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<tilec::v1::WorkerStatus> out;
  for (const auto& [_, w] : workers_) out.push_back(w.status);
  return out;
}

PoolCounters WorkerPool::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  PoolCounters c = counters_;
  c.jobs_queued = static_cast<int64_t>(queue_.size());
  c.workers = static_cast<int64_t>(workers_.size());
  for (const auto& [_, w] : workers_) c.workers_busy += !w.job.empty();
  return c;
}

}  // namespace tilec::server
