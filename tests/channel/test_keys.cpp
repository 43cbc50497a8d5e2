#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "app/sia-run/agent_command.hpp"
#include "channel/allow_list.hpp"
#include "channel/keys.hpp"
#include "channel/security.hpp"
#include "channel_test_util.hpp"
#include "test_util.hpp"

using namespace sia::channel;
using sia::channel::test::TempDir;
using sia::test::error_of;

namespace {

int mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("keygen writes a private key file and a public one", "[keys]") {
  TempDir tmp;
  KeyFiles f = write_key_files(tmp / "ctl", false);
  CHECK(f.key_file == tmp / "ctl.key");
  CHECK(f.pub_file == tmp / "ctl.pub");
  CHECK(mode_of(f.key_file) == 0600);
  CHECK(mode_of(f.pub_file) == 0644);
  CHECK(valid_z85_key(f.pair.public_key));
  CHECK(valid_z85_key(f.pair.secret_key));

  KeyPair back = load_secret_key(f.key_file);
  CHECK(back.public_key == f.pair.public_key);
  CHECK(back.secret_key == f.pair.secret_key);
  CHECK(load_public_key(f.pub_file) == f.pair.public_key);
  CHECK(load_public_key(f.key_file) == f.pair.public_key);
  CHECK(public_of(f.pair.secret_key) == f.pair.public_key);

  // Not replaced without --force.
  auto [status, message] = error_of([&] { write_key_files(tmp / "ctl", false); });
  CHECK(status == 73);
  CHECK(message == f.key_file + ": already exists; not replaced (remove it, or use --force)");
  KeyFiles g = write_key_files(tmp / "ctl", true);
  CHECK(g.pair.public_key != f.pair.public_key);
}

TEST_CASE("a secret key file must be mode 0600", "[keys]") {
  TempDir tmp;
  KeyFiles f = write_key_files(tmp / "node", false);
  ::chmod(f.key_file.c_str(), 0644);
  auto [status, message] = error_of([&] { load_secret_key(f.key_file); });
  CHECK(status == 77);
  CHECK(message == f.key_file +
                       ": mode 0644, expected 0600 (the secret key must be private; "
                       "chmod 600 " +
                       f.key_file + ")");
  ::chmod(f.key_file.c_str(), 0400);
  CHECK(error_of([&] { load_secret_key(f.key_file); }).first == 77);
  ::chmod(f.key_file.c_str(), 0600);
  CHECK_NOTHROW(load_secret_key(f.key_file));

  // The agent refuses to start with it, before connecting anywhere.
  ::chmod(f.key_file.c_str(), 0640);
  AgentArgs args;
  args.connect = "tcp://127.0.0.1:1";
  args.node = "n0";
  args.state_dir = tmp / "state";
  args.server_key = f.pub_file;
  args.secret_key = f.key_file;
  auto [s2, m2] = error_of([&] { run_agent(args); });
  CHECK(s2 == 77);
  CHECK(m2.find("mode 0640, expected 0600") != std::string::npos);
}

TEST_CASE("bad key files are refused with the file and field", "[keys]") {
  TempDir tmp;
  CHECK(error_of([&] { load_secret_key(tmp / "missing.key"); }).first == 66);
  write(tmp / "bad.key", "public = \"short\"\nsecret = \"short\"\n");
  ::chmod((tmp / "bad.key").c_str(), 0600);
  auto [status, message] = error_of([&] { load_secret_key(tmp / "bad.key"); });
  CHECK(status == 78);
  CHECK(message == tmp / "bad.key" +
                       ": secret: expected a 40-character Z85 CURVE key, got the string \"short\"");

  KeyPair a = generate_keypair();
  KeyPair b = generate_keypair();
  write(tmp / "mixed.key",
        "public = \"" + a.public_key + "\"\nsecret = \"" + b.secret_key + "\"\n");
  ::chmod((tmp / "mixed.key").c_str(), 0600);
  auto [s3, m3] = error_of([&] { load_secret_key(tmp / "mixed.key"); });
  CHECK(s3 == 78);
  CHECK(m3 == tmp / "mixed.key" + ": public: does not belong to the secret key in the same file");

  write(tmp / "bare.pub", a.public_key + "\n");
  CHECK(load_public_key(tmp / "bare.pub") == a.public_key);
  write(tmp / "junk.pub", "hello\n");
  CHECK(error_of([&] { load_public_key(tmp / "junk.pub"); }).first == 78);
}

TEST_CASE("the allow-list maps keys to agents and clients", "[keys]") {
  KeyPair a = generate_keypair();
  KeyPair c = generate_keypair();
  std::string text = "[[agent]]\nnode = \"t4-0\"\nkey = \"" + a.public_key +
                     "\"\n[[client]]\nname = \"alice\"\nkey = \"" + c.public_key + "\"\n";
  AllowList list = AllowList::parse(text, "allow.toml");
  REQUIRE(list.size() == 2);
  auto who = list.find(a.public_key);
  REQUIRE(who);
  CHECK(who->user_id() == "agent:t4-0");
  CHECK(who->authenticated);
  CHECK(list.find(c.public_key)->user_id() == "client:alice");
  CHECK_FALSE(list.find(generate_keypair().public_key));

  auto [s1, m1] = error_of(
      [&] { AllowList::parse("[[agent]]\nnode = \"t4-0\"\nkey = \"nope\"\n", "allow.toml"); });
  CHECK(s1 == 78);
  CHECK(m1 ==
        "allow.toml: agent[0].key: expected a 40-character Z85 CURVE public key, got the string "
        "\"nope\"");
  auto [s2, m2] = error_of([&] {
    AllowList::parse(text + "[[client]]\nname = \"bob\"\nkey = \"" + a.public_key + "\"\n",
                     "allow.toml");
  });
  CHECK(s2 == 78);
  CHECK(m2 == "allow.toml: client[1].key: the key is listed already, for agent:t4-0");
  CHECK(error_of([&] { AllowList::parse("[[agent]]\nkey = \"x\"\n", "a.toml"); }).first == 78);
  // admin = true: a client that may act on every client's jobs; not for agents.
  KeyPair r = generate_keypair();
  AllowList with_admin = AllowList::parse(
      text + "[[client]]\nname = \"root\"\nkey = \"" + r.public_key + "\"\nadmin = true\n",
      "allow.toml");
  CHECK(with_admin.find(r.public_key)->admin);
  CHECK_FALSE(with_admin.find(c.public_key)->admin);
  auto [s4, m4] = error_of([&] {
    AllowList::parse("[[agent]]\nnode = \"t4-0\"\nkey = \"" + a.public_key + "\"\nadmin = true\n",
                     "allow.toml");
  });
  CHECK(s4 == 78);
  CHECK(m4.find("allow.toml: agent[0].admin: only a [[client]] may be an admin") == 0);
  CHECK(error_of([&] { AllowList::read("/nonexistent/allow.toml"); }).first == 66);
}

TEST_CASE("a client of the allow-list may name the local account its jobs run as", "[keys]") {
  KeyPair a = generate_keypair();
  KeyPair c = generate_keypair();
  KeyPair d = generate_keypair();
  AllowList list = AllowList::parse(
      "[[client]]\nname = \"alice\"\nkey = \"" + c.public_key +
          "\"\nuser = \"alice_1\"\n[[client]]\nname = \"bob\"\nkey = \"" + d.public_key + "\"\n",
      "allow.toml");
  CHECK(list.find(c.public_key)->account == "alice_1");
  CHECK(list.find(d.public_key)->account.empty());  // no user: the rule of core/run_as.hpp
  auto [s1, m1] = error_of([&] {
    AllowList::parse("[[client]]\nname = \"x\"\nkey = \"" + c.public_key + "\"\nuser = \"a b\"\n",
                     "allow.toml");
  });
  CHECK(s1 == 78);
  CHECK(m1.find("allow.toml: client[0].user: expected a local account name") == 0);
  CHECK(error_of([&] {
          AllowList::parse("[[client]]\nname = \"x\"\nkey = \"" + c.public_key + "\"\nuser = 7\n",
                           "allow.toml");
        }).first == 78);
  auto [s2, m2] = error_of([&] {
    AllowList::parse(
        "[[agent]]\nnode = \"t4-0\"\nkey = \"" + a.public_key + "\"\nuser = \"alice\"\n",
        "allow.toml");
  });
  CHECK(s2 == 78);
  CHECK(m2.find("allow.toml: agent[0].user: only a [[client]] has a user") == 0);
}

TEST_CASE("which endpoints may go without CURVE: ipc:// and inproc://, never tcp", "[keys]") {
  CHECK(is_local_endpoint("ipc:///run/sia/ctl"));
  CHECK(is_local_endpoint("inproc://x"));
  CHECK_FALSE(is_local_endpoint("tcp://127.0.0.1:7400"));
  CHECK_FALSE(is_local_endpoint("tcp://localhost:7400"));
  CHECK_FALSE(is_local_endpoint("tcp://[::1]:7400"));
  CHECK_FALSE(is_local_endpoint("tcp://0.0.0.0:7400"));
  CHECK_FALSE(is_local_endpoint("udp://127.0.0.1:7400"));

  auto [status, message] = error_of(
      [] { require_curve("tcp://127.0.0.1:7400", false, "bind", "set [controller] secret_key"); });
  CHECK(status == 78);
  CHECK(message ==
        "bind tcp://127.0.0.1:7400: CURVE is mandatory on tcp, loopback included (set "
        "[controller] secret_key)");
  CHECK(error_of([] {
          require_curve("tcp://[::1]:1", false, "connect", "", sia::ExitStatus::no_perm);
        }).first == 77);
  CHECK_NOTHROW(require_curve("tcp://0.0.0.0:7400", true, "bind", ""));
  CHECK_NOTHROW(require_curve("ipc:///run/sia/ctl", false, "connect", ""));

  HubOptions o;
  o.bind = "tcp://127.0.0.1:0";
  CHECK(error_of([&] { Hub hub(o, nullptr); }).first == 78);
  o.server_key = generate_keypair();
  auto [s2, m2] = error_of([&] { Hub hub(o, nullptr); });
  CHECK(s2 == 78);
  CHECK(m2.find("without an allow-list") != std::string::npos);

  // A keyless agent refuses to start on tcp, loopback too, saying where the key is.
  AgentArgs args;
  args.connect = "tcp://127.0.0.1:7400";
  args.node = "n0";
  TempDir tmp;
  args.state_dir = tmp / "state";
  auto [s3, m3] = error_of([&] { run_agent(args); });
  CHECK(s3 == 78);
  CHECK(m3.find("connect tcp://127.0.0.1:7400: CURVE is mandatory on tcp") == 0);
  CHECK(m3.find("STATE_DIR/keys/server.pub") != std::string::npos);
}

TEST_CASE("an ipc:// socket is bound only inside a private directory", "[keys]") {
  TempDir tmp;
  // Missing: made 0700.
  HubOptions o;
  o.bind = "ipc://" + tmp / "run/ctl";
  o.log = [](const std::string&) {};
  { Hub hub(o, nullptr); }
  struct stat st {};
  REQUIRE(::stat((tmp / "run").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  // Open to others: refused (77), naming the directory and its mode.
  std::filesystem::create_directory(tmp / "open");
  ::chmod((tmp / "open").c_str(), 0755);
  o.bind = "ipc://" + tmp / "open/ctl";
  auto [status, message] = error_of([&] { Hub hub(o, nullptr); });
  CHECK(status == 77);
  CHECK(message.find("the socket's directory " + tmp / "open" + " (mode 0755") !=
        std::string::npos);
}

TEST_CASE("the controller's own keys are made once in STATE/keys and found by clients", "[keys]") {
  TempDir tmp;
  const std::string state = tmp / "state";
  CHECK_FALSE(local_admin_keys(state));
  LocalKeys k1 = make_local_keys(state);
  LocalKeys k2 = make_local_keys(state);
  CHECK(k1.server.public_key == k2.server.public_key);
  CHECK(k1.admin.secret_key == k2.admin.secret_key);
  CHECK(k1.server.public_key != k1.admin.public_key);
  struct stat st {};
  REQUIRE(::stat(k1.dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(::stat(local_key_file(state, "server", "key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat(local_key_file(state, "server", "pub").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  auto keys = local_admin_keys(state);
  REQUIRE(keys);
  CHECK(keys->server_key == k1.server.public_key);
  CHECK(keys->own.public_key == k1.admin.public_key);
}

TEST_CASE("a malformed endpoint is a usage error naming the flag", "[keys]") {
  CHECK(error_of([] { check_endpoint("tcp//x", "connect"); }) ==
        std::pair<int, std::string>{64,
                                    "--connect: expected an endpoint tcp://HOST:PORT, "
                                    "ipc://PATH or inproc://NAME, got \"tcp//x\""});
  CHECK(error_of([] { check_endpoint("tcp://ctl", "connect"); }).first == 64);
  CHECK(error_of([] { check_endpoint("tcp://ctl:99999", "connect"); }).first == 64);
  CHECK(error_of([] { check_endpoint("tcp://ctl:*", "connect"); }).first == 64);
  CHECK(error_of([] { check_endpoint("ipc://", "connect"); }).first == 64);
  CHECK(error_of([] { require_curve("tcp//x", true, "connect", ""); }).first == 64);
  CHECK_NOTHROW(check_endpoint("tcp://ctl:7400", "connect"));
  CHECK_NOTHROW(check_endpoint("tcp://[::1]:7400", "connect"));
  CHECK_NOTHROW(check_endpoint("tcp://127.0.0.1;10.0.0.1:7400", "connect"));
  CHECK_NOTHROW(check_endpoint("tcp://127.0.0.1:*", "bind"));
  CHECK_NOTHROW(check_endpoint("ipc:///tmp/sia.sock", "connect"));
  CHECK_NOTHROW(check_endpoint("inproc://x", "bind"));
}
