// The sentences of installed files (src/installed's evidence): missing libraries, and the loaded
// owner of a family built from another version.
#include <filesystem>
#include <string>

#include "common/paths.h"
#include "common/text.h"
#include "report/said.h"

namespace mlc::said {
namespace {

std::string short_list(const std::vector<std::string>& items) { return join_list(items, " and "); }

// Whether the loader's search for the library already reaches a copy found this way: no RUNPATH to add.
bool searched_for_it(loader::FoundHow how) {
  using loader::FoundHow;
  return how == FoundHow::Runpath || how == FoundHow::Rpath || how == FoundHow::LdLibraryPath ||
         how == FoundHow::LdSoCache || how == FoundHow::Default;
}

// $ORIGIN, or $ORIGIN/<relative path> from the requester's directory to the directory holding the copy
// (either given relative to the working directory, as a path named on the command line is).
std::string relative_origin(const std::string& from, const std::string& to) {
  if (from == to) return "$ORIGIN";
  std::error_code ec;
  const auto whole = [&](const std::string& dir) { return std::filesystem::absolute(dir, ec).lexically_normal(); };
  std::string rel = whole(to).lexically_relative(whole(from)).string();
  return rel.empty() || rel == "." ? "$ORIGIN" : "$ORIGIN/" + rel;
}

}  // namespace

std::string NoLoadedDefinition::words() const { return "no loaded object defines it"; }

std::string WouldComeFrom::words() const {
  std::string evidence;
  switch (basis) {
    case Basis::Version: evidence = "its version " + version + " is required from " + owner; break;
    case Basis::OtherVersionDefines: evidence = definer + " (" + at + ") defines it"; break;
    case Basis::OnlyMissing:
      evidence =
          "no loaded object defines it and " + owner + " is the only library " + needer + " needs that was not found";
      break;
  }
  return "would come from " + owner + ", which was not found: " + evidence;
}

std::string LibraryNotFound::words() const {
  if (!beside.empty() && checked)
    return "library not found: " + name + " (needed by " + short_list(needers) + "): found among the files checked (" +
           beside + "), but not on " + (needers.size() > 1 ? "their" : "its") + " search path";
  if (!beside.empty())
    return "library not found: " + name + " (needed by " + short_list(needers) + "): found beside it (" + beside +
           "), but not on its search path";
  std::vector<std::string> found;
  for (const auto& o : others) found.push_back(o.path + " [" + shown_how(o) + "]");
  return "library not found: " + name + " (needed by " + short_list(needers) + "); " +
         (found.empty() ? std::string("no other version of it was found")
                        : std::to_string(found.size()) + " other version" + (found.size() == 1 ? "" : "s") +
                              " found: " + short_list(found));
}

std::string InstallLibrary::words() const {
  const std::string who = needers.empty() ? std::string("it") : short_list(needers);
  if (!beside.empty()) {
    // patchelf's --add-rpath keeps the entries the file has (--set-rpath would drop its $ORIGIN). Needers in
    // several directories each take the path from their own.
    const bool one = needers.size() <= 1;
    std::string out = "add ";
    if (one || by_dir.empty()) {
      const std::string origin = relative_origin(dir_of(first_needer), dir_of(beside));
      out += "RUNPATH " + origin + " to " + needers.front() + " (link it with -Wl,-rpath,'" + origin +
             "', or patchelf --add-rpath '" + origin + "' " + first_needer + ")";
    } else {
      std::vector<std::string> origins, groups;
      for (const auto& [dir, names] : by_dir) {
        origins.push_back(relative_origin(dir, dir_of(beside)));
        groups.push_back("RUNPATH " + origins.back() + " to " + short_list(names));
      }
      out += join_list(groups, ", and ");
      out += origins.size() == 1 ? " (link each with -Wl,-rpath,'" + origins[0] + "', or patchelf --add-rpath '" +
                                       origins[0] + "' on each)"
                                 : " (link each with its -Wl,-rpath, or patchelf --add-rpath with its path)";
    }
    if (checked)
      out += ", or load " + beside + " before " + (one ? "it" : "them") + ": its soname " + name +
             " then answers the need";
    return out;
  }
  if (!other)
    return "install " + name + ", or add the directory that holds it to " +
           (needers.size() > 1 ? "the RUNPATH of " + who : who + "'s RUNPATH") + " or LD_LIBRARY_PATH";
  return "install " + name + " (the version " + who + (needers.size() > 1 ? " were" : " was") +
         " linked against) where the loader searches, or rebuild " + who + " against " + other_soname + " (" +
         other->path + ")" +
         (searched_for_it(other->how) ? std::string() : " and add " + dir_of(other->path) + " to its RUNPATH");
}

std::string ProviderLacks::words() const {
  std::string out = "built against another version of " + soname + ": the loaded " + library + torch_note +
                    " defines " + std::to_string(members) + " symbol" + (members == 1 ? "" : "s") + " of " + family +
                    " but not this one";
  if (!same.empty()) {
    out += "; it has ";
    for (size_t i = 0; i < same.size(); ++i) out += (i ? ", " : "") + same[i];
  } else if (!members_shown.empty()) {
    out += "; its other members include ";
    for (size_t i = 0; i < members_shown.size(); ++i) out += (i ? ", " : "") + members_shown[i];
  }
  return out;
}
std::string InstallProviderBuiltAgainst::words() const {
  return "install the version of " + (torch.empty() ? soname : "torch") + " that " + holder +
         " was built against, or rebuild " + holder + " against the loaded " + who +
         (torch.empty() ? "" : " (torch " + torch + ")");
}
std::string ProviderLacksMany::words() const {
  return holder + " was built against another version of " + soname + ": the loaded " + who + " (" + path +
         (torch.empty() ? "" : ", torch " + torch) + ") lacks " + std::to_string(symbols) + " symbols it needs";
}

}  // namespace mlc::said
