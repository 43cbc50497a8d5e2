// The policy knobs, one row each: the configuration key (under [controller]), the
// environment variable, the command-line flag, the type, the range, the help text, and the
// PolicyOptions field that holds the value (whose initialiser is the default). From this
// table are made the flags of sia-solve and `sia-ctl simulate` (tools/common/knob_flags.hpp),
// the configuration keys of sia-config(5) and their environment variables (ctl/config.cpp),
// the range checks and their messages (check_knobs), the knobs an external solve stage
// receives (knob_environment), and the man pages' knob entries, which a test compares
// with it (tests/policy/test_knobs.cpp).
// Every knob has both a flag and a key. A message names a knob as the caller says the user
// wrote it (a flag, or a key and its source), so no message is parsed back.
// Thread-safety: the table is immutable; the functions are pure.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "policy/policy.hpp"

namespace sia {

// The programs that take a knob as a flag (sia-ctl serve and round read every knob from
// their configuration).
enum KnobScope : unsigned {
  kSolveFlag = 1,     // sia-solve
  kSimulateFlag = 2,  // sia-ctl simulate
};

struct Knob {
  // Where the value lives in PolicyOptions; the member's type is the knob's type.
  using Field = std::variant<double PolicyOptions::*, int PolicyOptions::*,
                             unsigned PolicyOptions::*, bool PolicyOptions::*>;
  const char* key;   // the configuration key, controller.KEY
  const char* env;   // the environment variable of the key
  const char* flag;  // "--lambda-n"; a boolean also has "--no-..."
  const char*
      arg;  // the flag's argument as the man pages name it ("P", "SECONDS"); "" for a boolean
  Field field;
  // The range: min <= v <= max, or min < v when min_open. Numbers outside a rule that a
  // range cannot say (p and lambda_n's signs) are checked by check_knobs too.
  double min, max;
  bool min_open;
  const char* unit;  // said in range messages ("seconds"); "" for none
  const char* help;  // the flag's help text
  const char* what;  // the key's description (sia-ctl config, sia-config(5))
  unsigned scope;    // KnobScope bits
};

// Every knob, in documentation order.
const std::vector<Knob>& knob_table();
// The row whose key (or flag) is `name`; nullptr when none.
const Knob* find_knob(const std::string& name);

// The knob's value in `o`, and its default (PolicyOptions{}'s), as text: "%g" for numbers,
// "true"/"false".
std::string knob_text(const Knob& k, const PolicyOptions& o);
std::string knob_default(const Knob& k);
// The range as messages say it: "between 0 and 1", "> 0 seconds and at most 86400", ">= 0".
std::string knob_range(const Knob& k);
// The knob's type as messages say it: "a number", "an integer", "true or false".
std::string knob_kind(const Knob& k);

// Sets the knob in `o` from text (a flag's or an environment variable's value). Returns
// false, leaving `o` alone, when the text is not of the knob's type (the range is
// check_knobs'). Booleans take true/false/1/0.
bool set_knob(const Knob& k, PolicyOptions& o, const std::string& text);
// Sets a number knob from a number (a configuration file's value). Returns false when it
// is not a whole number of the knob's integer type, or not finite.
bool set_knob(const Knob& k, PolicyOptions& o, double value);

// One knob out of its range, or a rule between two knobs broken: `knob` is the one to
// change; `other`, when not null, the one the rule ties it to.
struct KnobProblem {
  const Knob* knob;
  const Knob* other;
  // What is wrong, with "{other}" where the other knob's name goes.
  std::string what;
};
// Every problem of `o`'s knobs, in table order (none: the knobs are usable).
std::vector<KnobProblem> knob_problems(const PolicyOptions& o);
// A problem as one line: "NAME: what", each knob named by `name` (a flag, a key).
std::string describe(const KnobProblem& problem,
                     const std::function<std::string(const Knob&)>& name);

// Sets each knob not in `given` (keys) whose environment variable `getenv` finds set and
// not empty; returns their keys. A value not of the knob's type is Error(config):
// "environment SIA_CTL_P: expected a number, got \"x\"".
std::set<std::string> read_knob_environment(PolicyOptions& o, const std::set<std::string>& given,
                                            const std::function<const char*(const char*)>& getenv);

// Throws Error for the first problem of `o`'s knobs: a knob in `from_env` is named by its
// variable ("environment SIA_CTL_P", status config), any other by its flag (status usage).
void check_knobs(const PolicyOptions& o, const std::set<std::string>& from_env);

// The knobs as the environment of an external solve stage: every knob's variable with its
// value in `o` (sia-solve reads them; its flags win).
std::map<std::string, std::string> knob_environment(const PolicyOptions& o);

// The knobs' entries of sia-config(5)'s [controller] section, in roff (.TP paragraphs):
// key, variable, flag, what it is, its range and default. The page holds them between
// the lines kManBegin and kManEnd; a test checks that they are these.
std::string knob_config_roff();
inline constexpr const char* kManBegin = ".\\\" knobs: begin (made from lib/policy/knobs.cpp)";
inline constexpr const char* kManEnd = ".\\\" knobs: end";

}  // namespace sia
