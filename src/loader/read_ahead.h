// The mapping phase reads its candidates ahead, on the other cores. glibc maps one DT_NEEDED after
// another, and so does the emulation (loader.cpp): which file a name resolves to depends on what was
// loaded before it. But what reading a file gives (its load header, its dynamic section) depends on the
// file alone. So once an object is loaded, the searches its DT_NEEDED names will make are walked on other
// threads, and the first file each would accept is read there; the serial walk takes the reads it reaches.
// Nothing a read ahead decides is used: the walk still searches every name itself, in glibc's order.
// A read the walk never reaches is thrown away.
// Off unless MLC_READ_AHEAD=N asks for it: it pays where each read is dear (2 cores, a slow file system)
// and cost more than it saved on a 16-core host with a warm page cache.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <tbb/task_group.h>

#include "common/result.h"
#include "elf/elf_object.h"
#include "loader/loader.h"
#include "loader/search_order.h"

namespace mlc::loader {

// What the mapping phase reads of an object: its headers and dynamic section, no symbol table.
inline constexpr elf::ReadOptions kHeadersOnly{false, false, false};

// One file read ahead: what read_load_header said of it against the process's class and, when it was
// accepted with nothing against mapping it, its headers (read_object with the headers only).
struct ReadAheadFile {
  elf::LoadHeader header;
  std::optional<Result<elf::ElfObject>> object;
};

class ReadAhead {
 public:
  // `cache`: the run's stat(2) answers and objects (may be null).
  ReadAhead(const elf::ProcessClass& process_class, ObjectCache* cache);
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // Whether to read ahead: MLC_READ_AHEAD=N asks for N readers (off when unset), and there is another
  // thread to read on.
  static bool worthwhile();

  // Walks `steps` for `name` on another thread, as the search would, and reads the first regular file
  // found there (on to the next place when it is of another class or machine).
  void search(std::shared_ptr<const SearchSteps> steps, std::string name,
              std::shared_ptr<const std::vector<std::string>> subdirs);

  // Returns once every search asked for so far has been walked.
  void finish();

  // What was read of `path` ahead; nullopt when nothing was (the caller reads it). While it is being read,
  // the caller takes on the next search not started, or waits. Each read is handed out once; the path is
  // never read ahead after this call.
  std::optional<ReadAheadFile> take(const std::string& path);

 private:
  enum class State { Reading, Read, Taken };
  struct Entry {
    State state = State::Reading;
    ReadAheadFile file;
  };
  struct Search {
    std::shared_ptr<const SearchSteps> steps;
    std::string name;
    std::shared_ptr<const std::vector<std::string>> subdirs;
  };
  void drain();
  void walk(const Search& search);

  const elf::ProcessClass class_;
  ObjectCache* cache_;
  const int readers_;  // the threads that read ahead at most (the cores but the walk's)
  std::mutex mutex_;
  std::condition_variable read_;
  std::unordered_map<std::string, Entry> files_;
  std::deque<Search> searches_;  // not started yet, in the order they were asked for
  int reading_ = 0;              // the readers at work
  std::atomic<bool> stopping_{false};
  tbb::task_group tasks_;
};

}  // namespace mlc::loader
