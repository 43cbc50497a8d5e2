#include "ctl/submission.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "core/document.hpp"
#include "core/error.hpp"
#include "exec/state_dir.hpp"
#include "model/job_state.hpp"

namespace sia::ctl {

void validate_submission(const JobSpec& spec, const Catalog& catalog, const std::string& where) {
  auto fail = [&](const std::string& field, const std::string& what) {
    throw Error(ExitStatus::data, located(where, field, what));
  };
  if (!exec::usable_job_name(spec.name)) {
    fail("name", "\"" + spec.name + "\" cannot name a job (letters, digits, '-', '_', '.')");
  }
  if (spec.command.empty()) {
    fail("command", "expected the program and arguments sia-run starts, got none");
  }
  if (spec.model.empty() && !spec.profile) {
    fail("model", "expected a catalog model (or the job's own profile), got none");
  }
  if (!spec.model.empty() && !catalog.has(spec.model)) {
    std::string names;
    for (const auto& n : catalog.names()) names += (names.empty() ? "" : ", ") + n;
    fail("model", "unknown model \"" + spec.model + "\" (catalog has: " + names + ")");
  }
}

std::vector<JobSpec> read_submissions(const std::vector<std::string>& files,
                                      const Catalog& catalog) {
  std::vector<JobSpec> out;
  std::set<std::string> names;
  for (const auto& f : files) {
    auto docs = read_documents(f, {"JobSpec", "Jobs"});
    for (const auto& s : jobs_from_documents(docs)) {
      validate_submission(s.spec, catalog, s.where());
      if (!names.insert(s.spec.name).second) {
        throw Error(ExitStatus::data,
                    s.where("name") + ": job \"" + s.spec.name + "\" is given twice");
      }
      out.push_back(s.spec);
    }
  }
  if (out.empty()) throw Error(ExitStatus::data, "no job to submit");
  return out;
}

std::string local_identity() {
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_name && *pw->pw_name) {
    return std::string("local:") + pw->pw_name;
  }
  if (const char* u = std::getenv("USER"); u && *u) return std::string("local:") + u;
  return "local:uid" + std::to_string(::getuid());
}

}  // namespace sia::ctl
