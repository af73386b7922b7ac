#include "loader/read_ahead.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <tbb/task_arena.h>

namespace mlc::loader {

namespace {

// The readers at most: MLC_READ_AHEAD=N asks for N, never more than the cores but the walk's; none when it
// is not set. On the device (16 cores, a micro-VM), reading ahead cost more than it saved: the walk of
// torch 2.11's libtorch_cpu (about 60 objects) took 1.8 ms alone and 3.8 ms with 15 readers, and even one
// reader made the run 1 ms slower; on this project's 2-core CI machines, where each read costs more, it
// saved 3-4 ms of a 20 ms walk (docs/benchmarks.md, "Fourteenth pass").
int readers_wanted() {
  static const int asked = [] {
    const char* v = std::getenv("MLC_READ_AHEAD");
    return v && *v >= '0' && *v <= '9' ? std::atoi(v) : 0;
  }();
  return asked > 0 ? std::min(asked, tbb::this_task_arena::max_concurrency() - 1) : 0;
}

}  // namespace

ReadAhead::ReadAhead(const elf::ProcessClass& process_class, ObjectCache* cache)
    : class_(process_class), cache_(cache), readers_(std::max(1, readers_wanted())) {}

ReadAhead::~ReadAhead() {
  stopping_ = true;
  tasks_.wait();
}

void ReadAhead::finish() { tasks_.wait(); }

bool ReadAhead::worthwhile() { return readers_wanted() > 0; }

void ReadAhead::search(std::shared_ptr<const SearchSteps> steps, std::string name,
                       std::shared_ptr<const std::vector<std::string>> subdirs) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    searches_.push_back({std::move(steps), std::move(name), std::move(subdirs)});
    if (reading_ >= readers_) return;
    ++reading_;
  }
  tasks_.run([this] { drain(); });
}

// A reader: the searches not started, oldest first (the order the walk reaches them), until none is left.
void ReadAhead::drain() {
  for (;;) {
    Search next;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (searches_.empty() || stopping_) {
        --reading_;
        return;
      }
      next = std::move(searches_.front());
      searches_.pop_front();
    }
    walk(next);
  }
}

void ReadAhead::walk(const Search& search) {
  using V = elf::LoadHeader::Verdict;
  each_step(*search.steps, search.name, *search.subdirs,
            [&](const std::string& path, FoundHow, int, bool, const std::optional<SearchOutcome>& passed_over) {
              if (stopping_) return true;
              if (passed_over) return false;
              struct stat st;
              if (const int err = stat_through(cache_, path, st); err != 0)
                return err != ENOENT && err != ENOTDIR && err != EACCES;  // the search goes on past these
              // A directory or a device ends the search; an object this run read already is the walk's to take.
              if (!S_ISREG(st.st_mode) || (cache_ && cache_->find(st.st_dev, st.st_ino))) return true;
              {
                std::lock_guard<std::mutex> lock(mutex_);
                auto [it, fresh] = files_.try_emplace(path);
                if (!fresh) {
                  // Read (or being read) by another search, or tried by the walk: this search ends there
                  // unless that file is of another class or machine.
                  const V v = it->second.file.header.verdict;
                  return it->second.state != State::Read || (v != V::OtherClass && v != V::OtherMachine);
                }
              }
              ReadAheadFile read;
              bool thrown = false;
              try {
                elf::Descriptor file;
                read.header = elf::read_load_header(path, class_, &file);
                if (read.header.verdict == V::Accepted && read.header.map_refusal.empty())
                  read.object = elf::read_object(file, path, kHeadersOnly);
              } catch (...) {
                thrown = true;  // the walk reads the file itself, and meets what threw where it is handled
              }
              const V verdict = read.header.verdict;
              {
                std::lock_guard<std::mutex> lock(mutex_);
                Entry& entry = files_[path];
                entry.file = std::move(read);
                entry.state = thrown ? State::Taken : State::Read;
              }
              read_.notify_all();
              return thrown || (verdict != V::OtherClass && verdict != V::OtherMachine);
            });
}

std::optional<ReadAheadFile> ReadAhead::take(const std::string& path) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto [it, fresh] = files_.try_emplace(path);
  Entry& entry = it->second;
  if (fresh) {
    entry.state = State::Taken;  // the walk reads it itself; no search ahead starts it now
    return std::nullopt;
  }
  while (entry.state == State::Reading) {
    if (searches_.empty()) {
      read_.wait(lock);
      continue;
    }
    // Another thread reads this file: the walk reads the next file meanwhile, rather than wait.
    Search next = std::move(searches_.front());
    searches_.pop_front();
    lock.unlock();
    walk(next);
    lock.lock();
  }
  if (entry.state == State::Taken) return std::nullopt;
  entry.state = State::Taken;
  return std::move(entry.file);
}

}  // namespace mlc::loader
