#include "ui/ui_assets.hpp"

namespace batchai::serve {

const UiAsset* find_ui_asset(std::string_view name) {
  for (const UiAsset& a : ui_assets())
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace batchai::serve
