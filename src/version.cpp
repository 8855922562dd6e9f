#include "mjpeg/encoder.hpp"

namespace mjpeg {
const char* version() { return MJPEG_VERSION_STRING; }
}  // namespace mjpeg
