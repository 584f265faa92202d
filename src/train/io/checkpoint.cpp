// Checkpoint file: "BAICKPT1", u64 header length, JSON header, params, optimizer state (raw
// little-endian float32), then the SHA-256 of everything before it.
#include "io/checkpoint.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "batchai/common/errors.hpp"
#include "data/checksum.hpp"

namespace batchai::train {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'B', 'A', 'I', 'C', 'K', 'P', 'T', '1'};
constexpr std::size_t kDigestBytes = 32;

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

void append_floats(std::string& out, const std::vector<float>& v) {
  const std::size_t at = out.size();
  out.resize(at + v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(out.data() + at, v.data(), v.size() * sizeof(float));
}

[[noreturn]] void corrupt(const std::string& path, const std::string& why) {
  throw InvalidArgument("checkpoint '" + path + "' is torn or corrupt (" + why +
                        "): it was probably cut short by a crash; delete it to start from "
                        "scratch or resume from an older checkpoint");
}

}  // namespace

void save_checkpoint(const std::string& path, const Checkpoint& c) {
  nlohmann::json header = {{"format", 1},
                           {"epoch", c.epoch},
                           {"global_step", c.global_step},
                           {"seed", c.seed},
                           {"rng_state", c.rng_state},
                           {"param_count", c.params.size()},
                           {"optimizer_count", c.optimizer_state.size()},
                           {"extra", c.extra}};
  const std::string text = header.dump();
  std::string body(kMagic, sizeof(kMagic));
  put_u64(body, text.size());
  body += text;
  append_floats(body, c.params);
  append_floats(body, c.optimizer_state);
  Sha256 sha;
  sha.update(body.data(), body.size());
  const auto digest = sha.finish();
  body.append(reinterpret_cast<const char*>(digest.data()), digest.size());

  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw SystemError("cannot create checkpoint '" + tmp + "'");
  const bool ok = std::fwrite(body.data(), 1, body.size(), f) == body.size() &&
                  std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw SystemError("writing checkpoint '" + tmp + "' failed (disk full?)");
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) throw SystemError("cannot move checkpoint into place at '" + path + "': " + ec.message());
}

Checkpoint load_checkpoint(const std::string& path) {
  std::error_code ec;
  const auto bytes = fs::file_size(path, ec);
  if (ec) throw NotFound("checkpoint '" + path + "' does not exist; nothing to resume from");
  std::string data(bytes, '\0');
  std::ifstream in(path, std::ios::binary);
  if (!in.read(data.data(), static_cast<std::streamsize>(bytes))) {
    throw SystemError("reading checkpoint '" + path + "' failed");
  }
  if (data.size() < sizeof(kMagic) + 8 + kDigestBytes) corrupt(path, "file too short");
  if (std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0) corrupt(path, "not a batchai checkpoint");
  const std::size_t body = data.size() - kDigestBytes;
  Sha256 sha;
  sha.update(data.data(), body);
  const auto digest = sha.finish();
  if (std::memcmp(digest.data(), data.data() + body, kDigestBytes) != 0) {
    corrupt(path, "checksum mismatch");
  }
  const std::uint64_t header_len = get_u64(data.data() + sizeof(kMagic));
  const std::size_t header_at = sizeof(kMagic) + 8;
  if (header_len > body - header_at) corrupt(path, "header longer than the file");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(data.substr(header_at, header_len));
  } catch (const nlohmann::json::exception& e) {
    corrupt(path, std::string("bad header: ") + e.what());
  }
  Checkpoint c;
  try {
    c.epoch = header.at("epoch").get<int>();
    c.global_step = header.at("global_step").get<long long>();
    c.seed = header.at("seed").get<std::uint64_t>();
    c.rng_state = header.at("rng_state").get<std::string>();
    c.extra = header.at("extra").get<std::map<std::string, std::string>>();
    c.params.resize(header.at("param_count").get<std::size_t>());
    c.optimizer_state.resize(header.at("optimizer_count").get<std::size_t>());
  } catch (const nlohmann::json::exception& e) {
    corrupt(path, std::string("bad header: ") + e.what());
  }
  const std::size_t floats_at = header_at + header_len;
  const std::size_t want = (c.params.size() + c.optimizer_state.size()) * sizeof(float);
  if (body - floats_at != want) corrupt(path, "payload length does not match the header");
  if (!c.params.empty()) std::memcpy(c.params.data(), data.data() + floats_at, c.params.size() * 4);
  if (!c.optimizer_state.empty()) {
    std::memcpy(c.optimizer_state.data(), data.data() + floats_at + c.params.size() * 4,
                c.optimizer_state.size() * 4);
  }
  return c;
}

}  // namespace batchai::train
