// What a node's commands print (sia-config(5) [nodes]): the input read as the status
// command's RunStatus (then what the round engine takes from it), as the apply command's
// RunPlan (then the delivered record it becomes, applied to a book), as the logs command's
// RunLog (then the JobLog `sia-ctl logs` prints), and as the reports command's lines (then
// the report records they become, applied to a book where job "fuzz" runs on "n0").
#include "ctl/node_outputs.hpp"
#include "ctl/job_log.hpp"
#include "ctl/report_records.hpp"
#include "fuzz_input.hpp"
#include "use_book.hpp"

using namespace sia;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ctl::JobBook start = fuzz::running_book();
  const std::string out(fuzz::text(data, size));
  fuzz::run([&] {
    ctl::NodeStatus s;
    s.node = "n0";
    s.ok = true;
    s.status = ctl::node_document(out, "node n0: status", "RunStatus");
    ctl::jobs_on_nodes({s});
  });
  fuzz::run([&] {
    ctl::JobBook book = start;
    nlohmann::json plan = ctl::node_document(out, "node n0: apply", "RunPlan");
    book.apply(ctl::make_delivered(1, "n0", true, "", plan));
    fuzz::use_book(book);
  });
  fuzz::run([&] {
    ctl::LogQuery query;
    query.job = "fuzz";
    ctl::RankLogSource source;
    source.node = "n0";
    source.state = ctl::Lifecycle::running;
    ctl::job_log_document(query, source, ctl::node_document(out, "node n0: logs", "RunLog")).dump();
  });
  return fuzz::run([&] {
    ctl::JobBook book = start;
    std::string error;
    auto lines = ctl::node_report_lines("n0", out, &error);
    ctl::ForeignReports foreign;
    for (const auto& rec : ctl::report_records(book, lines, 1020, nullptr, foreign)) {
      book.apply(rec);
    }
    fuzz::use_book(book);
  });
}
