#include "core/document.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_cursor.hpp"
#include "core/json_limits.hpp"
#include "core/toml_json.hpp"

namespace sia {

using nlohmann::json;

Node Document::data() const {
  // Field paths in messages are relative to the data part ("jobs[3].model"), which is also
  // the whole of a TOML file.
  Node r(*root, file, "", status);
  Node d = r.at("data");
  return Node(d.json(), file, "", status);
}

Node Document::metadata() const {
  static const json empty = json::object();
  Node r(*root, file, "", status);
  if (auto m = r.get("metadata")) {
    if (!m->is_object()) m->expected("an object");
    return *m;
  }
  return Node(empty, file, "metadata", status);
}

static bool looks_like_toml(std::string_view text, const std::string& file) {
  if (file.size() >= 5 && file.compare(file.size() - 5, 5, ".toml") == 0) return true;
  if (file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0) return false;
  if (file.size() >= 6 && file.compare(file.size() - 6, 6, ".jsonl") == 0) return false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c != '{' && c != '[';
  }
  return false;
}

static std::string kinds_list(const std::vector<std::string>& kinds) {
  std::string s;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i) s += i + 1 == kinds.size() ? " or " : ", ";
    s += kinds[i];
  }
  return s;
}

void check_envelope(const Node& root, const std::vector<std::string>& kinds) {
  if (!root.is_object()) root.expected("a sia document (a JSON object with apiVersion and kind)");
  Node v = root.at("apiVersion");
  std::string api = v.as_string();
  const std::string prefix = "sia/v";
  bool ok = false;
  if (api.compare(0, prefix.size(), prefix) == 0) {
    std::string rest = api.substr(prefix.size());
    std::size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) {
      ++digits;
    }
    ok = digits > 0 && rest.substr(0, digits) == "1" &&
         (digits == rest.size() || rest[digits] == '.' || std::isalpha(rest[digits]));
  }
  if (!ok) {
    v.fail("unsupported apiVersion \"" + api + "\" (this build reads " + std::string(kApiVersion) +
           ")");
  }
  Node k = root.at("kind");
  std::string kind = k.as_string();
  if (kinds.empty()) return;
  for (const auto& want : kinds) {
    if (kind == want) return;
  }
  k.fail("expected a document of kind " + kinds_list(kinds) + ", got kind \"" + kind + "\"");
}

namespace {
// Documents kept by keep_documents_until_exit(): deliberately never destroyed.
std::vector<std::shared_ptr<const json>>* g_kept = nullptr;
}  // namespace

void keep_documents_until_exit() {
  if (!g_kept) g_kept = new std::vector<std::shared_ptr<const json>>();
}

static Document make_document(std::shared_ptr<json> root, const std::string& name,
                              const std::vector<std::string>& kinds, ExitStatus status,
                              const std::string& path_prefix) {
  Node r(*root, name, path_prefix, status);
  check_envelope(r, kinds);
  Document d;
  d.file = name;
  d.kind = (*root)["kind"].get<std::string>();
  d.api_version = (*root)["apiVersion"].get<std::string>();
  d.root = std::move(root);
  d.status = status;
  if (g_kept) g_kept->push_back(d.root);
  return d;
}

// A TOML file names its kind only when it is not the one the reader assumes; guess the
// kind of one that does not from its keys, so a file of the wrong kind is named as such.
static std::string guess_toml_kind(const json& data, const std::string& assumed) {
  if (!data.is_object()) return assumed;
  if (data.contains("node_groups")) return "Cluster";
  if (data.contains("jobs") && data["jobs"].is_array()) return "Jobs";
  if (data.contains("name") && (data.contains("model") || data.contains("command"))) {
    return "JobSpec";
  }
  // An App (a search): its trials' template, their values or its scheduler.
  if (data.contains("name") &&
      (data.contains("template") || data.contains("hparams") || data.contains("scheduler"))) {
    return "App";
  }
  if (data.contains("controller") || data.contains("stages") || data.contains("serve")) {
    return "a configuration file (sia-config(5))";
  }
  return assumed;
}

std::vector<Document> parse_documents(std::string_view text, const std::string& file,
                                      const std::vector<std::string>& kinds, ExitStatus status) {
  const std::string name = display_name(file);
  text = skip_bom(text);  // in JSON, JSON Lines and TOML alike
  // Nothing at all: an empty file, or a program that printed nothing.
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw Error(status, name + ": empty input, expected a sia document");
  }
  std::vector<Document> docs;
  if (looks_like_toml(text, file)) {
    auto data = std::make_shared<json>(toml_to_json(text, name, status));
    auto root = std::make_shared<json>(json::object());
    std::string api(kApiVersion);
    std::string kind = kinds.empty() ? std::string() : kinds.front();
    if (data->is_object()) {
      if (auto it = data->find("apiVersion"); it != data->end()) {
        if (it->is_string()) api = it->get<std::string>();
        data->erase(it);
      }
      if (auto it = data->find("kind"); it != data->end()) {
        if (it->is_string()) kind = it->get<std::string>();
        data->erase(it);
      } else if (!kinds.empty()) {
        std::string guess = guess_toml_kind(*data, kind);
        if (std::find(kinds.begin(), kinds.end(), guess) != kinds.end()) {
          kind = guess;
        } else if (guess != kind) {
          throw Error(status, located(name, "",
                                      "expected a " + kinds_list(kinds) +
                                          " document, got what looks like " +
                                          (guess.front() == 'a' ? guess : "a " + guess)));
        }
      }
      if (auto it = data->find("metadata"); it != data->end()) {
        (*root)["metadata"] = *it;
        data->erase(it);
      }
    }
    (*root)["apiVersion"] = api;
    (*root)["kind"] = kind;
    (*root)["data"] = std::move(*data);
    // Paths inside a TOML file are relative to its top: strip "data." by viewing root.data.
    Node r(*root, name, "", status);
    check_envelope(r, kinds);
    Document d;
    d.file = name;
    d.kind = kind;
    d.api_version = api;
    d.root = std::move(root);
    d.status = status;
    docs.push_back(std::move(d));
    return docs;
  }
  // JSON: one document, or JSON Lines. Try one document first.
  JsonParse whole = parse_json_checked(text);
  const bool single = whole.error.empty();
  if (!single) {
    // JSON Lines only if the first non-empty line is a complete value on its own;
    // otherwise this is one broken document and its own error is the useful one.
    std::size_t start = text.find_first_not_of(" \t\r\n");
    std::size_t end = text.find('\n', start);
    std::string_view first = text.substr(start, end == std::string_view::npos ? end : end - start);
    bool lines = whole.syntax && end != std::string_view::npos &&
                 text.find_first_not_of(" \t\r\n", end) != std::string_view::npos &&
                 json::accept(first.begin(), first.end());
    if (!lines) throw Error(status, located(name, "", whole.error));
  }
  if (single) {
    docs.push_back(
        make_document(std::make_shared<json>(std::move(whole.value)), name, kinds, status, ""));
    return docs;
  }
  std::size_t line_no = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    std::string where = name + ":" + std::to_string(line_no);
    JsonParse one = parse_json_checked(line);
    if (!one.error.empty()) throw Error(status, located(where, "", one.error));
    docs.push_back(
        make_document(std::make_shared<json>(std::move(one.value)), where, kinds, status, ""));
  }
  return docs;
}

std::vector<Document> read_documents(const std::string& file, const std::vector<std::string>& kinds,
                                     ExitStatus status) {
  return parse_documents(read_input(file), file, kinds, status);
}

Document read_document(const std::string& file, const std::vector<std::string>& kinds,
                       ExitStatus status) {
  return parse_document(read_input(file), file, kinds, status);
}

Document parse_document(std::string_view text, const std::string& file,
                        const std::vector<std::string>& kinds, ExitStatus status) {
  auto docs = parse_documents(text, file, kinds, status);
  if (docs.size() != 1) {
    throw Error(status,
                display_name(file) + ": expected one document, got " + std::to_string(docs.size()));
  }
  return std::move(docs.front());
}

static void check_finite(const json& v, const std::string& path) {
  if (v.is_number_float()) {
    if (!std::isfinite(v.get<double>())) {
      throw Error(ExitStatus::software, "refusing to write a non-finite number at " + path);
    }
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) check_finite(*it, path + "." + it.key());
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      check_finite(v[i], path + "[" + std::to_string(i) + "]");
    }
  }
}

// Pretty form: objects one key per line, arrays of scalars (a row of a table, a list of
// GPU indices) kept on one line, so documents stay readable and diff well.
template <class J>
static void dump_pretty(const J& v, int indent, std::string& out) {
  auto pad = [&](int n) { out.append(static_cast<std::size_t>(n), ' '); };
  if (v.is_object()) {
    if (v.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += ",\n";
      first = false;
      pad(indent + 2);
      out += J(it.key()).dump();
      out += ": ";
      dump_pretty(*it, indent + 2, out);
    }
    out += "\n";
    pad(indent);
    out += "}";
  } else if (v.is_array()) {
    bool scalars = true;
    for (const auto& e : v) {
      if (e.is_structured()) {
        scalars = false;
        break;
      }
    }
    if (scalars) {
      out += v.dump(-1, ' ', false, json::error_handler_t::replace);
      return;
    }
    out += "[\n";
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out += ",\n";
      pad(indent + 2);
      dump_pretty(v[i], indent + 2, out);
    }
    out += "\n";
    pad(indent);
    out += "]";
  } else {
    out += v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

std::string dump_json(const json& value, bool pretty) {
  check_finite(value, "");
  if (!pretty) return value.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  dump_pretty(value, 0, out);
  return out;
}

std::string dump_document(std::string_view kind, const json& metadata, const json& data,
                          bool pretty) {
  check_finite(metadata, "metadata");
  check_finite(data, "data");
  nlohmann::ordered_json env;
  env["apiVersion"] = kApiVersion;
  env["kind"] = kind;
  env["metadata"] = metadata.is_null() ? json::object() : metadata;
  env["data"] = data;
  if (!pretty) return env.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  dump_pretty(env, 0, out);
  return out;
}

}  // namespace sia
