// The dashboard's page files (src/serve/ui/page/), compiled into the plugin by
// cmake/EmbedUiAssets.cmake: served at /ui/<name> with a content-hash ETag (docs/serve.md
// "Dashboard").
#pragma once
#include <cstddef>
#include <span>
#include <string_view>

namespace batchai::serve {

struct UiAsset {
  std::string_view name;          // file name in src/serve/ui/page/
  std::string_view content_type;
  const unsigned char* data;
  std::size_t size;
  std::string_view etag;          // quoted, as sent: "\"<first 128 bits of the SHA-256>\""
};

// Every asset, in name order (defined in the generated ui_assets_data.cpp).
std::span<const UiAsset> ui_assets();
// The asset called `name`; nullptr when there is none.
const UiAsset* find_ui_asset(std::string_view name);

}  // namespace batchai::serve
