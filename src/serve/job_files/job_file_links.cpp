#include "job_files/job_file_links.hpp"

#include <sys/stat.h>

#include <cctype>
#include <ctime>
#include <memory>
#include <optional>

#include "batchai/common/errors.hpp"
#include "door.hpp"
#include "batchai/control_plane/dashboard_reads.hpp"
#include "storage/byte_reply.hpp"
#include "http/encoding.hpp"
#include "storage/shared_key.hpp"  // rfc1123

namespace batchai::serve {
namespace {

// A link's token is a few hundred bytes; a longer path is refused before any decoding.
constexpr std::size_t kMaxTokenBytes = 4096;

// The signed text: a fixed label, so a bearer token's signature can never pass for a link's.
std::string link_signature(const Identity& identity, std::string_view payload) {
  return base64url_encode(hmac_sha256(identity.token_key, "batchai-files\n" + std::string(payload)));
}

// A manifest's file: a 6-element array whose first element names the mount root.
constexpr std::string_view kMountJob = "@mount-job";
constexpr std::string_view kMountCluster = "@mount-cluster";
constexpr std::uint64_t kMaxMountFileBytes = std::uint64_t{64} << 30;

std::optional<MountFileLink> decode_mount_payload(const Json& a) {
  if (!a.is_array() || a.size() != 6 || !a[5].is_number_integer()) return std::nullopt;
  for (std::size_t i = 0; i < 5; ++i)
    if (!a[i].is_string()) return std::nullopt;
  MountFileLink link;
  link.job_root = a[0] == std::string(kMountJob);
  if (!link.job_root && a[0] != std::string(kMountCluster)) return std::nullopt;
  link.job.where = {a[1].get<std::string>(), a[2].get<std::string>()};
  link.job.experiment = a[3].get<std::string>();
  link.job.name = a[4].get<std::string>();
  return link;
}

// What a browser needs to save the bytes rather than show them.
void as_attachment(HttpResponse& res, const std::string& file) {
  std::string name = file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  if (name.empty() || name.size() > 128) name = "file";
  res.set_header("Content-Disposition", "attachment; filename=\"" + name + "\"");
  res.set_header("X-Content-Type-Options", "nosniff");
}

std::optional<JobFileLink> decode_payload(std::string_view payload) {
  auto text = base64url_decode(payload);
  if (!text) return std::nullopt;
  Json a = Json::parse(*text, nullptr, false);
  if (!a.is_array() || a.size() != 8 || !a[7].is_number_integer()) return std::nullopt;
  for (std::size_t i = 0; i < 7; ++i)
    if (!a[i].is_string()) return std::nullopt;
  JobFileLink link;
  link.job.where = {a[0].get<std::string>(), a[1].get<std::string>()};
  link.job.experiment = a[2].get<std::string>();
  link.job.name = a[3].get<std::string>();
  link.directory_id = a[4].get<std::string>();
  link.path = a[5].get<std::string>();
  link.file = a[6].get<std::string>();
  link.expires_s = a[7].get<std::int64_t>();
  return link;
}

void forbidden(HttpResponse& res, const std::string& why) {
  reply_storage_error(res, 403, "AuthenticationFailed",
                      "Server failed to authenticate the request: " + why);
}

void not_found(HttpResponse& res) {
  reply_storage_error(res, 404, "ResourceNotFound", "The specified resource does not exist.");
}

// GET/HEAD of a link: the bytes as an attachment (nosniff; 206 for a Range), or Storage's XML
// error: 403 for a signature that does not check or a link past its expiry, 404 when the file is gone.
void answer_link(const HttpRequest& req, HttpResponse& res, const Identity& identity, control_plane::ControlPlane& cp,
                 std::int64_t now_s) {
  if (req.method != "GET" && req.method != "HEAD")
    return reply_storage_error(res, 400, "UnsupportedHttpVerb", "A job file link serves GET and HEAD only.");
  const std::string_view token = std::string_view(req.path).substr(kJobFileLinkPrefix.size());
  const auto dot = token.rfind('.');
  if (token.size() > kMaxTokenBytes || dot == std::string_view::npos)
    return forbidden(res, "the link is not one this server made.");
  const std::string_view payload = token.substr(0, dot);
  if (!constant_time_equal(token.substr(dot + 1), link_signature(identity, payload)))
    return forbidden(res, "the link's signature does not match.");
  // A manifest's file (its payload names the job and a mount root, then the path in it).
  if (auto text = base64url_decode(payload)) {
    const Json a = Json::parse(*text, nullptr, false);
    if (a.is_array() && a.size() == 7 && a[6].is_string() && a[5].is_number_integer()) {
      Json head = a;
      const std::string mount_path = a[6].get<std::string>();
      head.erase(6);
      auto mount = decode_mount_payload(head);
      if (!mount) return forbidden(res, "the link is not one this server made.");
      if (a[5].get<std::int64_t>() < now_s) return forbidden(res, "the link expired; open the job's page again for a new one.");
      control_plane::DashboardReads reads(cp);
      auto opened = reads.open_mount_file(mount->job, mount->job_root, mount_path, kMaxMountFileBytes);
      if (!opened) return not_found(res);
      as_attachment(res, mount_path);
      const std::uint64_t size = opened->size;
      return reply_bytes(req, res, std::make_shared<const UniqueFd>(std::move(opened->fd)), size);
    }
  }
  auto link = decode_payload(payload);
  if (!link) return forbidden(res, "the link is not one this server made.");
  if (link->expires_s < now_s) return forbidden(res, "the link expired; list the job's files again for a new one.");
  auto folder = cp.jobs().output_folder(link->job, link->directory_id, link->path);
  if (!folder) return not_found(res);
  auto fd = folder->open_file(link->file, "The file name");
  struct stat st {};
  if (!fd || ::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) return not_found(res);
  res.set_header("Last-Modified", rfc1123(st.st_mtim.tv_sec));
  res.set_header("x-ms-type", "File");
  as_attachment(res, link->file);
  reply_bytes(req, res, std::make_shared<const UniqueFd>(std::move(*fd)), static_cast<std::uint64_t>(st.st_size));
}

}  // namespace

std::string job_file_url(const Identity& identity, const std::string& base, const JobFileLink& link) {
  const Json a = {link.job.where.resource_group, link.job.where.workspace, link.job.experiment, link.job.name,
                  link.directory_id, link.path, link.file, link.expires_s};
  const std::string payload = base64url_encode(a.dump());
  return base + std::string(kJobFileLinkPrefix) + payload + "." + link_signature(identity, payload);
}

std::string mount_file_url(const Identity& identity, const std::string& base, const MountFileLink& link) {
  const Json a = {std::string(link.job_root ? kMountJob : kMountCluster), link.job.where.resource_group, link.job.where.workspace,
                  link.job.experiment, link.job.name, link.expires_s, link.mount_path};
  const std::string payload = base64url_encode(a.dump());
  return base + std::string(kJobFileLinkPrefix) + payload + "." + link_signature(identity, payload);
}

bool is_job_file_request(const HttpRequest& req) { return req.path.rfind(kJobFileLinkPrefix, 0) == 0; }

namespace {

// Signed by the link itself (no credential to check); a link takes no body.
class JobFilesDoor final : public Door {
 public:
  explicit JobFilesDoor(ServeState& state) : state_(state) {}

  bool claims(const HttpRequest& head) const override { return is_job_file_request(head); }
  BodyPlan admit(const HttpRequest& head) override { return refuse_any_body(*this, head); }

  void answer(HttpRequest& req, HttpResponse& res) override {
    auto lease = state_.pool.borrow();
    answer_link(req, res, state_.identity, *lease, now_seconds());
  }

  // A link answers as the SAS URL it stands for (Storage's XML, its generic words: a link's
  // client knows no service codes); what is refused before a link is read, as the gateway.
  void render_error(const HttpRequest*, HttpResponse& res, const ErrorAnswer& e) const override {
    if (e.from_transport) return reply_json_error(res, e.status, gateway_code(e.kind), e.message);
    reply_storage_error(res, e.status, storage_code(e.kind), e.message);
  }

 private:
  ServeState& state_;
};

}  // namespace

std::unique_ptr<Door> make_job_files_door(ServeState& state) { return std::make_unique<JobFilesDoor>(state); }

}  // namespace batchai::serve
