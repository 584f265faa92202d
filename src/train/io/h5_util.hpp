// Thin RAII and string-attribute helpers over the HDF5 C API for the Keras model file.
// Strings are written as numpy/h5py 'S' strings (fixed length, null padded), as Keras 2.1 did;
// reading also accepts variable-length strings (what newer h5py writes).
#pragma once
#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

namespace batchai::train::h5 {

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer, const std::string& what);  // throws when id < 0
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, -1)), closer_(o.closer_) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, -1);
      closer_ = o.closer_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  void reset();

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// Silences HDF5's automatic error-stack printing while alive (we throw our own messages).
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

void check(herr_t rc, const std::string& what);  // throws SystemError when rc < 0

void write_string_attr(hid_t obj, const char* name, const std::string& value);
void write_string_list_attr(hid_t obj, const char* name, const std::vector<std::string>& values);
bool has_attr(hid_t obj, const char* name);
// Throws InvalidArgument naming the attribute when it is missing or not a string.
std::string read_string_attr(hid_t obj, const char* name);
std::vector<std::string> read_string_list_attr(hid_t obj, const char* name);

}  // namespace batchai::train::h5
