// Worker report lines: the input is ROOT/jobs/fuzz/reports.jsonl of a sia-run state
// directory. read_report_lines() takes its lines out as `sia-run reports` does (and each
// is printed as that command prints it), report_records() turns them into the journal's
// report records for a book where job "fuzz" runs on node "n0" (generation 1), the book
// applies them, and the book is used (use_book.hpp).
#include <filesystem>

#include "ctl/job_book.hpp"
#include "ctl/report_records.hpp"
#include "exec/report_lines.hpp"
#include "fuzz_input.hpp"
#include "use_book.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string root = sia::fuzz::scratch_path("node-state");
  static const sia::ctl::JobBook start = sia::fuzz::running_book();
  static const sia::exec::StateDir state(root);
  std::filesystem::create_directories(root + "/jobs/fuzz");
  sia::fuzz::write_scratch(state.report_path("fuzz"), sia::fuzz::text(data, size));
  return sia::fuzz::run([&] {
    std::vector<sia::ctl::ReportLine> lines;
    for (const auto& r : sia::exec::read_report_lines(state, {})) {
      sia::exec::report_line_to_json(r).dump();
      lines.push_back({"n0", r.job, r.offset, r.line, r.next});
    }
    sia::ctl::JobBook book = start;
    sia::ctl::ForeignReports foreign;
    for (const auto& rec : sia::ctl::report_records(book, lines, 1020, nullptr, foreign)) {
      book.apply(rec);
    }
    sia::fuzz::use_book(book);
  });
}
