// A small JSON Schema draft-4 validator for the Batch AI config schemas (job, cluster, nfs):
// type, properties, required, items, enum, pattern, bounds, lengths, additional/pattern
// properties, oneOf/anyOf/allOf/not, dependencies and $ref to local "#/..." pointers.
// Errors name the offending JSON path and read like Python jsonschema's messages.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "batchai/common/json_util.hpp"

namespace batchai {

struct SchemaViolation {
  std::string path;     // "properties.nodeCount", "properties.outputDirectories[0].id"; "" = the root
  std::string message;  // "3.5 is not of type 'integer'"
  // "properties.nodeCount: 3.5 is not of type 'integer'" (just the message at the root).
  std::string to_string() const;
};

class JsonSchema {
 public:
  // `schema` is the whole schema document; "#/..." references resolve inside it. The ARM
  // deploymentTemplate.json#/definitions/expression reference is known offline (an "[...]"
  // string); any other external reference is reported as a violation when reached.
  explicit JsonSchema(Json schema);
  static JsonSchema load(const std::filesystem::path& file);

  // Drops `property` from the "required" list of definitions/<definition> (for files that omit
  // fields the CLI fills in later, e.g. accountName/credentials of storage mounts).
  void relax_required(const std::string& definition, const std::string& property);

  // Every violation found (empty = valid). Branch failures inside oneOf/anyOf are summarised.
  std::vector<SchemaViolation> validate(const Json& instance) const;
  bool is_valid(const Json& instance) const { return validate(instance).empty(); }
  // Throws InvalidArgument "<what> does not match the schema: <path>: <message>; ..." when invalid.
  void validate_or_throw(const Json& instance, const std::string& what) const;

 private:
  struct Context;
  void check(const Json& schema, const Json& instance, const std::string& path, Context& ctx) const;
  void check_object(const Json& schema, const Json& instance, const std::string& path,
                    Context& ctx) const;
  void check_array(const Json& schema, const Json& instance, const std::string& path,
                   Context& ctx) const;
  void check_combinators(const Json& schema, const Json& instance, const std::string& path,
                         Context& ctx) const;
  const Json& resolve(const std::string& ref, const std::string& path, Context& ctx) const;

  Json schema_;
};

// Python repr() of a JSON value as jsonschema prints it ('text', True, None, {'a': 1}), cut
// to about 80 characters.
std::string python_repr(const Json& value);

}  // namespace batchai
