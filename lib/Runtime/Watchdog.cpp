//===- Watchdog.cpp - Deadlines for calls that have none ------------------===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//

#include "Watchdog.h"

#include "epl/Runtime/Backend.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

using namespace epl::rt;

namespace {
using Clock = std::chrono::steady_clock;

/// The process's armed deadlines and the thread that watches them. Arming
/// does not wake it (a collective's deadline comes and goes in
/// microseconds): it looks at least every `kPoll`, so a deadline fires at
/// most that late.
class Watcher {
public:
  static Watcher &get() {
    // Never destroyed: the thread may still wait when the process exits.
    static Watcher *watcher = new Watcher;
    return *watcher;
  }
  uint64_t arm(Clock::time_point when, std::string message) {
    std::lock_guard<std::mutex> lock(mutex);
    uint64_t id = next++;
    armed.emplace(id, Armed{when, std::move(message)});
    return id;
  }
  void disarm(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex);
    armed.erase(id);
  }

private:
  static constexpr std::chrono::milliseconds kPoll{200};
  struct Armed {
    Clock::time_point when;
    std::string message;
  };
  Watcher() {
    std::thread([this] { watch(); }).detach();
  }
  void watch() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      Clock::time_point now = Clock::now(), wake = now + kPoll;
      for (auto &[id, a] : armed) {
        if (a.when <= now) {
          // What was printed stays (the steps' lines).
          std::fflush(stdout);
          std::string line = a.message + "\n";
          std::fputs(line.c_str(), stderr);
          std::fflush(stderr);
          std::_Exit(1);
        }
        wake = std::min(wake, a.when);
      }
      woken.wait_until(lock, wake);
    }
  }
  std::mutex mutex;
  std::condition_variable woken; // only timeouts: nothing notifies it
  std::map<uint64_t, Armed> armed;
  uint64_t next = 0;
};
} // namespace

Deadline::Deadline(double seconds, std::string message)
    : id(Watcher::get().arm(Clock::now() +
                                std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(seconds)),
                            std::move(message))) {}

Deadline::~Deadline() { Watcher::get().disarm(id); }

std::string epl::rt::timeoutMessage(int rank, const std::string &what,
                                    const std::string &whom, double seconds) {
  return toolName() + ": rank " + std::to_string(rank) + ": " + what +
         ": timed out after " + formatSeconds(seconds) + " waiting for " +
         whom + "; a rank may have failed, stopped or left (see --timeout)";
}
