// HDF5 helpers: handles, quiet error stack, fixed-length string attributes (numpy 'S').
#include "h5_util.hpp"

#include <algorithm>

#include "batchai/common/errors.hpp"

namespace batchai::train::h5 {

Handle::Handle(hid_t id, Closer closer, const std::string& what) : id_(id), closer_(closer) {
  if (id_ < 0) throw SystemError("HDF5: " + what + " failed");
}

void Handle::reset() {
  if (id_ >= 0 && closer_) closer_(id_);
  id_ = -1;
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

void check(herr_t rc, const std::string& what) {
  if (rc < 0) throw SystemError("HDF5: " + what + " failed");
}

namespace {

Handle fixed_string_type(std::size_t size) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
  check(H5Tset_size(type.get(), std::max<std::size_t>(size, 1)), "H5Tset_size");
  check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
  return type;
}

void write_attr(hid_t obj, const char* name, hid_t type, hid_t space, const void* data) {
  if (H5Aexists(obj, name) > 0) check(H5Adelete(obj, name), "H5Adelete");
  Handle attr(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
              std::string("creating attribute ") + name);
  check(H5Awrite(attr.get(), type, data), std::string("writing attribute ") + name);
}

}  // namespace

void write_string_attr(hid_t obj, const char* name, const std::string& value) {
  Handle type = fixed_string_type(value.size());
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
  std::string padded = value;
  padded.resize(std::max<std::size_t>(value.size(), 1), '\0');
  write_attr(obj, name, type.get(), space.get(), padded.data());
}

void write_string_list_attr(hid_t obj, const char* name, const std::vector<std::string>& values) {
  std::size_t width = 1;
  for (const auto& v : values) width = std::max(width, v.size());
  Handle type = fixed_string_type(width);
  const hsize_t dims[1] = {values.size()};
  Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose, "H5Screate_simple");
  std::string packed(values.size() * width, '\0');
  for (std::size_t i = 0; i < values.size(); ++i) packed.replace(i * width, values[i].size(), values[i]);
  write_attr(obj, name, type.get(), space.get(), packed.data());
}

bool has_attr(hid_t obj, const char* name) { return H5Aexists(obj, name) > 0; }

std::vector<std::string> read_string_list_attr(hid_t obj, const char* name) {
  if (!has_attr(obj, name)) {
    throw InvalidArgument(std::string("attribute '") + name + "' is missing: not a Keras model file");
  }
  Handle attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose, std::string("opening attribute ") + name);
  Handle type(H5Aget_type(attr.get()), H5Tclose, "H5Aget_type");
  Handle space(H5Aget_space(attr.get()), H5Sclose, "H5Aget_space");
  const hssize_t n_signed = H5Sget_simple_extent_npoints(space.get());
  const auto n = static_cast<std::size_t>(std::max<hssize_t>(n_signed, 0));
  std::vector<std::string> out;
  if (n == 0) return out;  // Keras writes an empty array for layers without weights
  if (H5Tget_class(type.get()) != H5T_STRING) {
    throw InvalidArgument(std::string("attribute '") + name + "' is not a string attribute");
  }
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
    check(H5Tset_size(mem.get(), H5T_VARIABLE), "H5Tset_size");
    std::vector<char*> ptrs(n, nullptr);
    check(H5Aread(attr.get(), mem.get(), ptrs.data()), std::string("reading attribute ") + name);
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, ptrs.data());
    return out;
  }
  const std::size_t width = H5Tget_size(type.get());
  Handle mem = fixed_string_type(width);
  std::string buf(n * width, '\0');
  check(H5Aread(attr.get(), mem.get(), buf.data()), std::string("reading attribute ") + name);
  for (std::size_t i = 0; i < n; ++i) {
    std::string s = buf.substr(i * width, width);
    s.erase(std::find(s.begin(), s.end(), '\0'), s.end());
    out.push_back(std::move(s));
  }
  return out;
}

std::string read_string_attr(hid_t obj, const char* name) {
  auto values = read_string_list_attr(obj, name);
  return values.empty() ? std::string() : values.front();
}

}  // namespace batchai::train::h5
