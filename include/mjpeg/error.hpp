// Errors thrown by mjpeg. The CLI maps UsageError to exit code 2 and every other Error to 1.
#pragma once

#include <stdexcept>
#include <string>

namespace mjpeg {

/// A runtime failure: unreadable input, I/O error, device failure.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The caller asked for something invalid (bad option value, unsupported size).
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace mjpeg
