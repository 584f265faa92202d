// Keras HDF5 model file: writer (atomic, via a temp file) and reader. Layout as Keras 2.1.6's
// save_model: root attributes, model_weights/@layer_names, model_weights/<layer>/@weight_names,
// model_weights/<layer>/<layer>/<weight> float32 datasets.
#include "io/keras_h5.hpp"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "batchai/common/errors.hpp"
#include "h5_util.hpp"

namespace batchai::train {
namespace fs = std::filesystem;
using h5::Handle;

namespace {

constexpr const char* kKerasVersion = "2.1.6";
constexpr const char* kBackend = "tensorflow";

std::vector<std::string> layer_names_of(const std::string& model_config_json) {
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(model_config_json);
  } catch (const nlohmann::json::parse_error& e) {
    throw InvalidArgument(std::string("model_config is not valid JSON: ") + e.what());
  }
  // Keras 2.1: {"config": [layers]}; Keras 2.2+: {"config": {"layers": [layers]}}.
  const nlohmann::json* layers = nullptr;
  if (config.contains("config") && config["config"].is_array()) layers = &config["config"];
  if (config.contains("config") && config["config"].is_object() &&
      config["config"].contains("layers")) {
    layers = &config["config"]["layers"];
  }
  if (!layers) throw InvalidArgument("model_config has no layer list under \"config\"");
  std::vector<std::string> names;
  for (const auto& l : *layers) names.push_back(l.at("config").at("name").get<std::string>());
  return names;
}

Handle create_group(hid_t parent, const std::string& name) {
  return Handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                H5Gclose, "creating group " + name);
}

void write_dataset(hid_t group, const std::string& name, const std::vector<int>& shape,
                   const float* values) {
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
               "H5Screate_simple");
  Handle set(H5Dcreate2(group, name.c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                        H5P_DEFAULT, H5P_DEFAULT),
             H5Dclose, "creating dataset " + name);
  h5::check(H5Dwrite(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values),
            "writing dataset " + name);
}

KerasWeight read_dataset(hid_t group, const std::string& layer, const std::string& path) {
  if (H5Lexists(group, path.c_str(), H5P_DEFAULT) <= 0) {
    throw InvalidArgument("weight '" + path + "' of layer '" + layer +
                          "' is listed in weight_names but has no dataset");
  }
  Handle set(H5Dopen2(group, path.c_str(), H5P_DEFAULT), H5Dclose, "opening dataset " + path);
  Handle space(H5Dget_space(set.get()), H5Sclose, "H5Dget_space");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  KerasWeight w;
  w.layer = layer;
  w.name = path.substr(path.rfind('/') + 1);
  std::size_t n = 1;
  for (hsize_t d : dims) {
    w.shape.push_back(static_cast<int>(d));
    n *= static_cast<std::size_t>(d);
  }
  w.values.resize(n);
  h5::check(H5Dread(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w.values.data()),
            "reading dataset " + path);
  return w;
}

}  // namespace

void save_keras_h5(const std::string& path, const std::string& model_config_json,
                   const std::string& training_config_json, const ParamTable& table,
                   const std::vector<float>& keras_weights) {
  const std::vector<std::string> layers = layer_names_of(model_config_json);
  std::map<std::string, std::vector<const ParamEntry*>> by_layer;
  for (const auto& e : table) {
    if (std::find(layers.begin(), layers.end(), e.layer) == layers.end()) {
      throw InvalidArgument("parameter " + e.layer + "/" + e.weight +
                            " belongs to no layer of the model_config");
    }
    if (e.offset + e.size() > keras_weights.size()) {
      throw InvalidArgument("parameter " + e.layer + "/" + e.weight + " ends at float " +
                            std::to_string(e.offset + e.size()) + " but only " +
                            std::to_string(keras_weights.size()) + " weights were given");
    }
    by_layer[e.layer].push_back(&e);
  }
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  const std::string tmp = path + ".tmp";
  h5::QuietErrors quiet;
  {
    Handle file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
                "creating '" + tmp + "'");
    h5::write_string_attr(file.get(), "keras_version", kKerasVersion);
    h5::write_string_attr(file.get(), "backend", kBackend);
    h5::write_string_attr(file.get(), "model_config", model_config_json);
    if (!training_config_json.empty()) {
      h5::write_string_attr(file.get(), "training_config", training_config_json);
    }
    Handle weights = create_group(file.get(), "model_weights");
    h5::write_string_list_attr(weights.get(), "layer_names", layers);
    h5::write_string_attr(weights.get(), "backend", kBackend);
    h5::write_string_attr(weights.get(), "keras_version", kKerasVersion);
    for (const auto& layer : layers) {
      Handle g = create_group(weights.get(), layer);
      std::vector<std::string> names;
      const auto it = by_layer.find(layer);
      if (it != by_layer.end()) {
        Handle inner = create_group(g.get(), layer);
        for (const ParamEntry* e : it->second) {
          names.push_back(layer + "/" + e->weight);
          write_dataset(inner.get(), e->weight, e->shape, keras_weights.data() + e->offset);
        }
      }
      h5::write_string_list_attr(g.get(), "weight_names", names);
    }
    h5::check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "flushing '" + tmp + "'");
  }
  fs::rename(tmp, path);
}

KerasModelFile load_keras_h5(const std::string& path) {
  if (!fs::is_regular_file(path)) throw NotFound("model file '" + path + "' does not exist");
  h5::QuietErrors quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    throw InvalidArgument("'" + path + "' is not an HDF5 file (truncated or another format)");
  }
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose,
              "opening '" + path + "'");
  KerasModelFile out;
  out.keras_version = h5::read_string_attr(file.get(), "keras_version");
  out.backend = h5::read_string_attr(file.get(), "backend");
  out.model_config = h5::read_string_attr(file.get(), "model_config");
  if (h5::has_attr(file.get(), "training_config")) {
    out.training_config = h5::read_string_attr(file.get(), "training_config");
  }
  // save_weights() files have the layers at the root; save() files under model_weights.
  const bool nested = H5Lexists(file.get(), "model_weights", H5P_DEFAULT) > 0;
  Handle weights = nested ? Handle(H5Gopen2(file.get(), "model_weights", H5P_DEFAULT), H5Gclose,
                                   "opening model_weights")
                          : Handle(H5Gopen2(file.get(), "/", H5P_DEFAULT), H5Gclose, "opening /");
  out.layer_names = h5::read_string_list_attr(weights.get(), "layer_names");
  for (const auto& layer : out.layer_names) {
    if (H5Lexists(weights.get(), layer.c_str(), H5P_DEFAULT) <= 0) {
      throw InvalidArgument("layer '" + layer + "' is in layer_names but has no group in '" +
                            path + "'");
    }
    Handle g(H5Gopen2(weights.get(), layer.c_str(), H5P_DEFAULT), H5Gclose, "opening " + layer);
    for (const auto& name : h5::read_string_list_attr(g.get(), "weight_names")) {
      out.weights.push_back(read_dataset(g.get(), layer, name));
    }
  }
  return out;
}

const KerasWeight& KerasModelFile::find(const std::string& layer, const std::string& name) const {
  for (const auto& w : weights) {
    if (w.layer == layer && w.name == name) return w;
  }
  throw NotFound("weight " + layer + "/" + name + " is not in the model file");
}

void keras_weights_to_table(const KerasModelFile& file, const ParamTable& table,
                            std::vector<float>& keras_weights) {
  keras_weights.resize(param_count(table));
  for (const auto& e : table) {
    const KerasWeight& w = file.find(e.layer, e.weight);
    if (w.shape != e.shape) {
      auto str = [](const std::vector<int>& s) {
        std::string r = "(";
        for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
        return r + ")";
      };
      throw InvalidArgument("weight " + e.layer + "/" + e.weight + " has shape " + str(w.shape) +
                            " in the file but the model expects " + str(e.shape));
    }
    std::copy(w.values.begin(), w.values.end(),
              keras_weights.begin() + static_cast<std::ptrdiff_t>(e.offset));
  }
}

}  // namespace batchai::train
