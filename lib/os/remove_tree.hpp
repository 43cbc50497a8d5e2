// remove_tree: removes a tree of files in a directory that another user controls (lib/os),
// as a root process must -- the job's Slurm directory a forgotten job leaves behind -- so
// that nothing outside the tree is ever touched, whatever the user planted inside it.
//
// The rule: the tree's name is reached relative to its parent's descriptor, and each
// directory in it is opened relative to the descriptor of the one above (openat with
// O_DIRECTORY|O_NOFOLLOW), never by a path string; each entry is removed with unlinkat in
// the directory that holds it. So
//   - a symbolic link, in the tree or at its top, is removed itself: its target, file or
//     directory, is left as it was;
//   - a directory swapped for a link between the listing and the open is not entered (the
//     open refuses the link; the link is removed);
//   - anything that is no directory (a file, a FIFO, a socket, a device node) is unlinked,
//     never opened; a second hard link to another file removes that name only.
// Trees deeper than the limit are refused before anything below the limit is entered,
// what was removed until then stays removed: "DIR/a/b/...: refused: deeper than 64 levels"
// (status 77). Failures are sia::Error naming the path: "DIR/x: cannot remove: <why>"
// (status 74). Thread-safety: functions of their arguments and the file system.
#pragma once

#include <string>

namespace sia::os {

// How deep remove_tree goes below the tree's top (the top's entries are level 1).
inline constexpr int kMaxTreeDepth = 64;

// Removes `name` in the directory open as `parent`: a directory with everything in it, or
// any other kind of entry (a link among them) itself. `path` names it in messages. False
// when there was nothing at the name.
bool remove_tree_in(int parent, const std::string& name, const std::string& path,
                    int max_depth = kMaxTreeDepth);

// remove_tree_in on the directory holding `path` (os::open_dir: its own name must not be a
// link) and its last name. False when the name or its directory does not exist.
bool remove_tree(const std::string& path, int max_depth = kMaxTreeDepth);

}  // namespace sia::os
