#include "storage/storage_xml.hpp"

#include <ctime>

#include "batchai/common/percent_encoding.hpp"
#include "batchai/common/utf8.hpp"
#include "storage/shared_key.hpp"

namespace batchai::serve {
namespace {

constexpr const char* kXmlHead = "<?xml version=\"1.0\" encoding=\"utf-8\"?>";

std::string element(const char* name, const std::string& text) {
  return std::string("<") + name + ">" + xml_escape(text) + "</" + name + ">";
}

// U+FFFE and U+FFFF: valid UTF-8, yet no XML 1.0 character.
bool is_noncharacter_at(const std::string& text, std::size_t i) {
  return i + 2 < text.size() && text[i] == '\xEF' && text[i + 1] == '\xBF' && (text[i + 2] == '\xBE' || text[i + 2] == '\xBF');
}

// A name XML cannot carry as text: a control character (tab and newlines included, which XML
// parsers would fold) or a noncharacter.
bool needs_encoding(const std::string& name) {
  for (std::size_t i = 0; i < name.size(); ++i)
    if (static_cast<unsigned char>(name[i]) < 0x20 || name[i] == 0x7F || is_noncharacter_at(name, i)) return true;
  return false;
}

// <Name>, or as Azure sends such names: <Name Encoded="true"> with the UTF-8 bytes
// percent-encoded (unreserved characters and '/' kept), which the Storage SDKs decode.
std::string name_element(const std::string& name) {
  const std::string valid = to_valid_utf8(name);
  if (!needs_encoding(valid)) return element("Name", valid);
  return "<Name Encoded=\"true\">" + percent_encode_path(valid) + "</Name>";
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
  // Well-formed whatever it is given: ill-formed UTF-8 and characters XML 1.0 has no place for
  // (controls other than tab and newlines, U+FFFE, U+FFFF) become U+FFFD.
  const std::string valid = to_valid_utf8(text);
  std::string out;
  out.reserve(valid.size());
  for (std::size_t i = 0; i < valid.size(); ++i) {
    const char c = valid[i];
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || is_noncharacter_at(valid, i)) {
      out += "\xEF\xBF\xBD";
      if (u >= 0x80) i += 2;
      continue;
    }
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
    out += "<Share>" + name_element(text_at(s, "name")) + "<Properties>" + time_and_etag(s["properties"]) +
           "<Quota>5120</Quota></Properties></Share>";
  return out + "</Shares><NextMarker /></EnumerationResults>";
}

std::string directory_list_xml(const std::string& endpoint, const std::string& share, const std::string& dir,
                               const Json& entries) {
  std::string out = std::string(kXmlHead) + "<EnumerationResults ServiceEndpoint=\"" + xml_escape(endpoint) +
                    "\" ShareName=\"" + xml_escape(share) + "\" DirectoryPath=\"" + xml_escape(dir) + "\"><Entries>";
  for (const auto& e : entries) {
    if (text_at(e, "type") == "dir")
      out += "<Directory>" + name_element(text_at(e, "name")) + "<Properties /></Directory>";
    else
      out += "<File>" + name_element(text_at(e, "name")) + "<Properties><Content-Length>" +
             length_of(e["properties"]) + "</Content-Length></Properties></File>";
  }
  return out + "</Entries><NextMarker /></EnumerationResults>";
}

std::string container_list_xml(const std::string& endpoint, const Json& containers) {
  std::string out = std::string(kXmlHead) + "<EnumerationResults ServiceEndpoint=\"" + xml_escape(endpoint) +
                    "\"><Containers>";
  for (const auto& c : containers)
    out += "<Container>" + name_element(text_at(c, "name")) + "<Properties>" + time_and_etag(c["properties"]) +
           "<LeaseStatus>unlocked</LeaseStatus><LeaseState>available</LeaseState></Properties></Container>";
  return out + "</Containers><NextMarker /></EnumerationResults>";
}

std::string blob_list_xml(const std::string& endpoint, const std::string& container, const std::string& prefix,
                          const Json& blobs) {
  std::string out = std::string(kXmlHead) + "<EnumerationResults ServiceEndpoint=\"" + xml_escape(endpoint) +
                    "\" ContainerName=\"" + xml_escape(container) + "\">" + element("Prefix", prefix) + "<Blobs>";
  for (const auto& b : blobs) {
    const Json& p = b["properties"];
    out += "<Blob>" + name_element(text_at(b, "name")) + "<Properties>" +
           element("Creation-Time", iso_to_rfc1123(text_at(p, "lastModified"))) + time_and_etag(p) +
           "<Content-Length>" + length_of(p) +
           "</Content-Length><Content-Type>application/octet-stream</Content-Type><BlobType>BlockBlob</BlobType>"
           "<LeaseStatus>unlocked</LeaseStatus><LeaseState>available</LeaseState></Properties></Blob>";
  }
  return out + "</Blobs><NextMarker /></EnumerationResults>";
}

}  // namespace batchai::serve
