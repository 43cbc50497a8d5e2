#include "serve/report_journal.hpp"

#include "ctl/report_records.hpp"

namespace sia::serve {

int journal_reports(const ctl::StateStore& store, ctl::JobBook& book,
                    const std::vector<ctl::ReportLine>& lines, double time,
                    const std::function<void(const std::string&)>& warn,
                    ctl::ForeignReports& foreign) {
  auto records = ctl::report_records(book, lines, time, warn, foreign);
  const int n = static_cast<int>(records.size());
  if (n > 0) store.commit(book, std::move(records));
  return n;
}

}  // namespace sia::serve
