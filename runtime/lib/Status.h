//===- Status.h - Status code plus message ----------------------*- C++ -*-===//
//
// Internal functions report failures as a Status: the C API code together
// with the message that ggemm_last_error() will return.
//
//===----------------------------------------------------------------------===//

#ifndef GGEMM_RUNTIME_STATUS_H
#define GGEMM_RUNTIME_STATUS_H

#include "ggemm-runtime/ggemm_runtime.h"

#include <string>
#include <utility>

namespace ggemm::runtime {

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(ggemm_status code, std::string message)
      : code(code), message(std::move(message)) {}

  static Status success() { return Status(); }

  bool ok() const { return code == GGEMM_OK; }
  ggemm_status getCode() const { return code; }
  const std::string &getMessage() const { return message; }

  /// Prefixes the message with `context` and ": ", keeping the code.
  Status withContext(const std::string &context) const {
    if (ok())
      return *this;
    return Status(code, context + ": " + message);
  }

private:
  ggemm_status code = GGEMM_OK;
  std::string message;
};

inline Status invalidArgument(std::string message) {
  return Status(GGEMM_ERROR_INVALID_ARGUMENT, std::move(message));
}
inline Status badManifest(std::string message) {
  return Status(GGEMM_ERROR_BAD_MANIFEST, std::move(message));
}
inline Status unsupported(std::string message) {
  return Status(GGEMM_ERROR_UNSUPPORTED, std::move(message));
}

} // namespace ggemm::runtime

#endif // GGEMM_RUNTIME_STATUS_H
