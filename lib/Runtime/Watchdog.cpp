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

#include <unistd.h>

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
  uint64_t arm(double seconds, std::string message,
               Deadline::Format format = nullptr,
               const void *context = nullptr) {
    Clock::time_point when =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(seconds));
    std::lock_guard<std::mutex> lock(mutex);
    uint64_t id = next++;
    armed.emplace(id, Armed{when, std::move(message), format, context});
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
    Deadline::Format format;
    const void *context;
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
          // Held while it fires: the armed call's disarm waits, so its
          // context stays.
          std::string line =
              (a.format ? a.format(a.context) : a.message) + "\n";
          // What was printed stays (the steps' lines), unless a thread
          // holds standard output (blocked on a full pipe): the deadline
          // must not wait for it.
          if (ftrylockfile(stdout) == 0) {
            fflush_unlocked(stdout);
            funlockfile(stdout);
          }
          for (size_t done = 0; done < line.size();) {
            ssize_t n = ::write(2, line.data() + done, line.size() - done);
            if (n <= 0)
              break;
            done += n;
          }
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
    : id(Watcher::get().arm(seconds, std::move(message))) {}

Deadline::Deadline(double seconds, Format format, const void *context)
    : id(Watcher::get().arm(seconds, "", format, context)) {}

Deadline::~Deadline() { Watcher::get().disarm(id); }

std::string epl::rt::timeoutMessage(int rank, const std::string &what,
                                    const std::string &whom, double seconds) {
  return toolName() + ": rank " + std::to_string(rank) + ": " + what +
         ": timed out after " + formatSeconds(seconds) + " waiting for " +
         whom + "; a rank may have failed, stopped or left (see --timeout)";
}
