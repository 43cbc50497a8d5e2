// A memory hint for the one-shot pipeline programs (sia-estimate, sia-solve, sia-place),
// which parse and build multi-megabyte JSON documents and exit: the C heap is grown in
// one 64 MiB step, asked to be backed by transparent huge pages (madvise MADV_HUGEPAGE)
// and never trimmed. On a 2,048-GPU round this cuts sia-solve's page faults from ~7,500 to
// ~1,000 and its CPU time by about 40% (bench/policy_runtime); pages are only used when
// touched, so the resident size grows by at most one huge page.
// It is a hint: on a kernel without transparent huge pages, with THP off, or with another
// C library, nothing changes and nothing fails. Not for long-running processes.
// Thread-safety: call once, first thing in main, before other threads exist.
#pragma once

namespace sia::cli {

void prefer_huge_page_heap();

}  // namespace sia::cli
