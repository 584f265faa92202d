#include "storage_xml.hpp"

#include <ctime>

#include "shared_key.hpp"

namespace batchai::serve {
namespace {

constexpr const char* kXmlHead = "<?xml version=\"1.0\" encoding=\"utf-8\"?>";

std::string element(const char* name, const std::string& text) {
  return std::string("<") + name + ">" + xml_escape(text) + "</" + name + ">";
}

std::string text_at(const Json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string time_and_etag(const Json& props) {
  return element("Last-Modified", iso_to_rfc1123(text_at(props, "lastModified"))) +
         element("Etag", text_at(props, "etag"));
}

std::string length_of(const Json& props) {
  auto it = props.find("contentLength");
  return std::to_string(it != props.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0);
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string iso_to_rfc1123(const std::string& iso) {
  if (iso.size() < 19) return "";
  std::tm tm{};
  const std::string head = iso.substr(0, 19);
  const char* end = strptime(head.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || *end != '\0') return "";
  return rfc1123(timegm(&tm));
}

std::string storage_error_xml(const std::string& code, const std::string& message) {
  return std::string(kXmlHead) + "<Error>" + element("Code", code) + element("Message", message) + "</Error>";
}

std::string share_list_xml(const std::string& endpoint, const Json& shares) {
  std::string out = std::string(kXmlHead) + "<EnumerationResults ServiceEndpoint=\"" + xml_escape(endpoint) +
                    "\"><Shares>";
  for (const auto& s : shares)
    out += "<Share>" + element("Name", text_at(s, "name")) + "<Properties>" + time_and_etag(s["properties"]) +
           "<Quota>5120</Quota></Properties></Share>";
  return out + "</Shares><NextMarker /></EnumerationResults>";
}

std::string directory_list_xml(const std::string& endpoint, const std::string& share, const std::string& dir,
                               const Json& entries) {
  std::string out = std::string(kXmlHead) + "<EnumerationResults ServiceEndpoint=\"" + xml_escape(endpoint) +
                    "\" ShareName=\"" + xml_escape(share) + "\" DirectoryPath=\"" + xml_escape(dir) + "\"><Entries>";
  for (const auto& e : entries) {
    if (text_at(e, "type") == "dir")
      out += "<Directory>" + element("Name", text_at(e, "name")) + "<Properties /></Directory>";
    else
      out += "<File>" + element("Name", text_at(e, "name")) + "<Properties><Content-Length>" +
             length_of(e["properties"]) + "</Content-Length></Properties></File>";
  }
  return out + "</Entries><NextMarker /></EnumerationResults>";
}

std::string container_list_xml(const std::string& endpoint, const Json& containers) {
  std::string out = std::string(kXmlHead) + "<EnumerationResults ServiceEndpoint=\"" + xml_escape(endpoint) +
                    "\"><Containers>";
  for (const auto& c : containers)
    out += "<Container>" + element("Name", text_at(c, "name")) + "<Properties>" + time_and_etag(c["properties"]) +
           "<LeaseStatus>unlocked</LeaseStatus><LeaseState>available</LeaseState></Properties></Container>";
  return out + "</Containers><NextMarker /></EnumerationResults>";
}

std::string blob_list_xml(const std::string& endpoint, const std::string& container, const std::string& prefix,
                          const Json& blobs) {
  std::string out = std::string(kXmlHead) + "<EnumerationResults ServiceEndpoint=\"" + xml_escape(endpoint) +
                    "\" ContainerName=\"" + xml_escape(container) + "\">" + element("Prefix", prefix) + "<Blobs>";
  for (const auto& b : blobs) {
    const Json& p = b["properties"];
    out += "<Blob>" + element("Name", text_at(b, "name")) + "<Properties>" +
           element("Creation-Time", iso_to_rfc1123(text_at(p, "lastModified"))) + time_and_etag(p) +
           "<Content-Length>" + length_of(p) +
           "</Content-Length><Content-Type>application/octet-stream</Content-Type><BlobType>BlockBlob</BlobType>"
           "<LeaseStatus>unlocked</LeaseStatus><LeaseState>available</LeaseState></Properties></Blob>";
  }
  return out + "</Blobs><NextMarker /></EnumerationResults>";
}

}  // namespace batchai::serve
