// UTF-8 validation and repair (see utf8.hpp); a small decoder of its own so every user of the
// common module agrees on what is valid, byte for byte.
#include "batchai/common/utf8.hpp"

#include <cstdint>

namespace batchai {
namespace {

// Length of the well-formed sequence starting at text[i], with its code point; 0 when ill-formed.
// The second byte's range depends on the first (RFC 3629 table), which is what refuses overlong
// forms (C0 AF, E0 80 AF), surrogates (ED A0..BF) and code points above U+10FFFF (F4 90..).
std::size_t sequence_at(std::string_view text, std::size_t i, std::uint32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  cp = c & (0xFF >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (b(k) & 0x3F);
  return n;
}

// How many bytes of an ill-formed sequence at text[i] form its maximal subpart (at least 1):
// a valid lead followed by valid continuations that stop short.
std::size_t ill_formed_span(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  std::size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 1;
  std::size_t k = 1;
  for (; k < n && i + k < text.size(); ++k) {
    const auto t = static_cast<unsigned char>(text[i + k]);
    unsigned char lo = 0x80, hi = 0xBF;
    if (k == 1 && c == 0xE0) lo = 0xA0;
    if (k == 1 && c == 0xED) hi = 0x9F;
    if (k == 1 && c == 0xF0) lo = 0x90;
    if (k == 1 && c == 0xF4) hi = 0x8F;
    if (t < lo || t > hi) break;
  }
  return k;
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

}  // namespace

bool is_valid_utf8(std::string_view text) {
  std::uint32_t cp = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_at(text, i, cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string to_valid_utf8(std::string_view text) {
  if (is_valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  std::uint32_t cp = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (const std::size_t n = sequence_at(text, i, cp)) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out.append(kReplacement);
      i += ill_formed_span(text, i);
    }
  }
  return out;
}

std::size_t utf16_length(std::string_view text) {
  std::size_t units = 0;
  std::uint32_t cp = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_at(text, i, cp);
    units += n == 4 ? 2 : 1;
    i += n == 0 ? 1 : n;
  }
  return units;
}

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string valid = to_valid_utf8(text);
  std::string out;
  out.reserve(valid.size());
  std::uint32_t cp = 0;
  for (std::size_t i = 0; i < valid.size();) {
    const std::size_t n = sequence_at(valid, i, cp);
    if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
      out += "\\x";
      out += kHex[(cp >> 4) & 0xF];
      out += kHex[cp & 0xF];
    } else {
      out.append(valid, i, n);
    }
    i += n;
  }
  return out;
}

}  // namespace batchai
